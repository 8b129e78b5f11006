package dev.soko.e2e;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What Soko's pool holds on every node, read from the pool's directory and filesystem as each node
 * sees them (through hack/local-cluster.sh): the volume images and the free bytes. A round records
 * the free bytes before it starts and, after its deletion, how soon the images are gone and the
 * free space is back.
 */
final class PoolDrain {
  /** Free bytes within this of the round's start count as back (filesystem metadata settles). */
  static final long SLACK_BYTES = 16L << 20;

  private static final long PERIOD_MILLIS = 250;

  private final LocalCluster cluster;
  private final String images = DefaultInstall.POOL_PATH + "/images";
  private final Map<String, Long> freeBefore = new HashMap<>();

  long imagesGone;
  long spaceBack;

  PoolDrain(LocalCluster cluster) {
    this.cluster = cluster;
  }

  /** Records each node's free bytes before the round. */
  void before() throws Exception {
    for (String node : cluster.nodes) {
      freeBefore.put(node, free(node));
    }
  }

  /** Waits until every node's pool holds no image and has its free bytes back, up to a deadline. */
  void awaitDrained(long deadlineNanos) throws Exception {
    while (System.nanoTime() < deadlineNanos && (imagesGone == 0 || spaceBack == 0)) {
      long now = System.nanoTime();
      if (imagesGone == 0 && imageCount() == 0) {
        imagesGone = now;
      }
      if (spaceBack == 0 && spaceIsBack()) {
        spaceBack = now;
      }
      Thread.sleep(PERIOD_MILLIS);
    }
  }

  /** Free bytes still missing on all nodes together, against the round's start. */
  long missingBytes() throws Exception {
    long missing = 0;
    for (String node : cluster.nodes) {
      missing += Math.max(0, freeBefore.get(node) - free(node));
    }
    return missing;
  }

  private int imageCount() throws Exception {
    int count = 0;
    for (String node : cluster.nodes) {
      List<String> names = cluster.list(node, images);
      count += (int) names.stream().filter(n -> n.endsWith(".img")).count();
    }
    return count;
  }

  private boolean spaceIsBack() throws Exception {
    for (String node : cluster.nodes) {
      if (free(node) < freeBefore.get(node) - SLACK_BYTES) {
        return false;
      }
    }
    return true;
  }

  private long free(String node) throws Exception {
    LocalCluster.Statfs fs = cluster.statfs(node, DefaultInstall.POOL_PATH);
    return fs.free() * fs.fragmentSize();
  }
}

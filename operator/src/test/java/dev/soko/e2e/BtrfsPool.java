package dev.soko.e2e;

import java.io.IOException;
import java.util.Map;

/**
 * A btrfs-subvolume pool beside the default one: its own btrfs disk (quotas on) on the cluster's
 * first node, which a label selects, and a class of it. The upgrade tiers write to it as to every
 * other kind of volume.
 */
final class BtrfsPool {
  static final String NAME = "btrfs";
  static final String CLASS = "soko-btrfs";

  private final String disk;
  private final String label;

  /**
   * @param tier names the disk and the node label, so that no two tiers share either
   */
  BtrfsPool(String tier) {
    this.disk = "/var/lib/soko-" + tier + "-btrfs";
    this.label = "e2e.soko.dev/" + tier + "-btrfs";
  }

  /** Mounts the disk on the first node and labels that node for the pool. */
  void mountOn(LocalCluster cluster) throws IOException, InterruptedException {
    cluster.mountDisk(cluster.node, disk, "1G", "btrfs");
    cluster.kubectl("label", "node", cluster.node, label + "=yes", "--overwrite");
  }

  /** Takes the label off the first node and unmounts the disk. */
  void removeFrom(LocalCluster cluster) throws IOException, InterruptedException {
    cluster.kubectl("label", "node", cluster.node, label + "-");
    cluster.umountDisk(cluster.node, disk);
  }

  /** A pod's node selector for the node that has the pool. */
  Map<String, String> nodeSelector() {
    return Map.of(label, "yes");
  }

  /** {@link DefaultInstall#spec()} with this pool on its node and its class. */
  String spec() {
    return DefaultInstall.spec()
        .replace(
            "storageClasses:\n",
            """
              - name: %s
                path: %s/pool
                backend: BtrfsSubvolume
                nodeSelector:
                  %s: "yes"
            storageClasses:
              - name: %s
                pool: %s
            """
                .formatted(NAME, disk, label, CLASS, NAME));
  }
}

package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.EXT4;
import static dev.soko.e2e.DefaultInstall.SNAPSHOTS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * A snapshot restored on another node than the one that holds it: a claim's pod pinned to the first
 * node writes data of a known sha256, a VolumeSnapshot of the claim is taken there, and a claim
 * restored from it whose pod is pinned to the second node binds there (the scheduler picks that
 * node, the node's driver copies the snapshot over the node-to-node data path) and reads the same
 * sha256; for an ext4 filesystem claim and for a raw block claim. A claim cloned from the mounted
 * ext4 claim, its pod pinned to the second node, reads there what was written on the first. A
 * restore larger than any node's free space stays Pending, its pod's event saying why. The default
 * install; it needs two nodes, and says so by skipping on one.
 */
class CrossNodeRestoreE2E extends RealClusterTier {
  private static final String APPS = "e2e-cross-node-restore";
  private static final Duration LONG = Duration.ofSeconds(180);
  private static final String HOSTNAME = "kubernetes.io/hostname";

  /** The node that holds the snapshots, and the one their restores' pods are pinned to. */
  private String holder;

  private String other;

  CrossNodeRestoreE2E() {
    super(APPS);
  }

  @BeforeAll
  void install() throws Exception {
    Assumptions.assumeTrue(
        cluster.nodes.size() > 1,
        "a restore on another node than its snapshot's needs two nodes; this cluster has "
            + cluster.nodes.size()
            + " (make cluster-up NODES=2)");
    holder = cluster.nodes.get(0);
    other = cluster.nodes.get(1);
    DefaultInstall.helmInstallReady(cluster, client, APPS);
  }

  @Test
  @Order(1)
  void anExt4SnapshotRestoredOnTheOtherNodeHoldsTheSameBytes() {
    apps.create(apps.claim("fs-source", EXT4, "64Mi", false));
    apps.create(pinned(apps.pod("fs-writer", "fs-source", false, false), holder));
    apps.awaitRunning("fs-writer", LONG);
    apps.sh("fs-writer", "dd if=/dev/urandom of=/data/blob bs=1M count=16 2>/dev/null && sync");
    String written = apps.sh("fs-writer", "sha256sum /data/blob | cut -d' ' -f1");
    assertThat(apps.nodesOf(apps.claimNamed("fs-source"))).containsExactly(holder);

    apps.snapshot("fs-snap", "fs-source", SNAPSHOTS, LONG);
    apps.create(restored("fs-restored", "fs-snap", false));
    apps.create(pinned(apps.pod("fs-reader", "fs-restored", false, false), other));
    apps.awaitRunning("fs-reader", LONG);

    assertThat(apps.nodesOf(apps.awaitBound("fs-restored", LONG)))
        .as("the restored volume is on the reader's node, not the snapshot's")
        .containsExactly(other);
    assertThat(apps.sh("fs-reader", "sha256sum /data/blob | cut -d' ' -f1"))
        .as("the restored volume holds the snapshot's bytes")
        .isEqualTo(written);
  }

  @Test
  @Order(2)
  void aBlockSnapshotRestoredOnTheOtherNodeHoldsTheSameBytes() {
    apps.create(apps.claim("raw-source", EXT4, "64Mi", true));
    apps.create(pinned(apps.pod("raw-writer", "raw-source", true, false), holder));
    apps.awaitRunning("raw-writer", LONG);
    // 4 MiB of data 8 MiB into the device: the rest stays holes, which the copy keeps as holes.
    String written =
        apps.sh(
            "raw-writer",
            "dd if=/dev/urandom of=/tmp/chunk bs=1M count=4 2>/dev/null"
                + " && dd if=/tmp/chunk of=/dev/xvda bs=1M seek=8 conv=fsync 2>/dev/null"
                + " && sha256sum /tmp/chunk | cut -d' ' -f1");

    apps.snapshot("raw-snap", "raw-source", SNAPSHOTS, LONG);
    apps.create(restored("raw-restored", "raw-snap", true));
    apps.create(pinned(apps.pod("raw-reader", "raw-restored", true, false), other));
    apps.awaitRunning("raw-reader", LONG);

    assertThat(apps.nodesOf(apps.awaitBound("raw-restored", LONG))).containsExactly(other);
    assertThat(
            apps.sh(
                "raw-reader",
                "dd if=/dev/xvda bs=1M skip=8 count=4 2>/dev/null | sha256sum | cut -d' ' -f1"))
        .isEqualTo(written);
    assertThat(apps.sh("raw-reader", "blockdev --getsize64 /dev/xvda"))
        .isEqualTo(String.valueOf(64L << 20));
  }

  @Test
  @Order(3)
  void aClaimClonedOnTheOtherNodeFromAMountedClaimHoldsTheSameBytes() {
    // fs-source is still mounted by fs-writer on the holder: its node copies it frozen, live.
    apps.sh("fs-writer", "dd if=/dev/urandom of=/data/cloned bs=1M count=8 2>/dev/null && sync");
    String written = apps.sh("fs-writer", "sha256sum /data/cloned | cut -d' ' -f1");
    PersistentVolumeClaim clone = apps.claim("fs-clone", EXT4, "64Mi", false);
    clone
        .getSpec()
        .setDataSource(new TypedLocalObjectReference(null, "PersistentVolumeClaim", "fs-source"));
    apps.create(clone);
    apps.create(pinned(apps.pod("clone-reader", "fs-clone", false, false), other));
    apps.awaitRunning("clone-reader", LONG);

    assertThat(apps.nodesOf(apps.awaitBound("fs-clone", LONG)))
        .as("the clone is on the reader's node, not its source's")
        .containsExactly(other);
    assertThat(apps.sh("clone-reader", "sha256sum /data/cloned | cut -d' ' -f1"))
        .as("the clone holds the source's bytes")
        .isEqualTo(written);
  }

  @Test
  @Order(4)
  void aRestoreLargerThanAnyNodesFreeSpaceStaysPendingWithAnEventThatSaysWhy() {
    PersistentVolumeClaim huge = restored("huge-restore", "fs-snap", false);
    huge.getSpec().getResources().getRequests().put("storage", new Quantity("100Gi"));
    apps.create(huge);
    apps.create(apps.pod("huge-reader", "huge-restore", false, false));
    Event event = apps.awaitEvent("huge-reader", "FailedScheduling", LONG);
    assertThat(event.getMessage())
        .as("the scheduler's reason, from the nodes' published capacity")
        .contains("enough free storage");
    assertThat(apps.claimNamed("huge-restore").getStatus().getPhase()).isEqualTo("Pending");
    assertThat(apps.events("huge-restore", "ProvisioningFailed"))
        .as("no node was asked to provision what none has room for")
        .isEmpty();
    client.pods().inNamespace(APPS).withName("huge-reader").withGracePeriod(0).delete();
    client.persistentVolumeClaims().inNamespace(APPS).withName("huge-restore").delete();
  }

  @Test
  @Order(5)
  void uninstallLeavesNothing() throws Exception {
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
  }

  /** A claim of 64Mi of the ext4 class restored from VolumeSnapshot {@code snapshot}. */
  private PersistentVolumeClaim restored(String name, String snapshot, boolean block) {
    PersistentVolumeClaim claim = apps.claim(name, EXT4, "64Mi", block);
    claim
        .getSpec()
        .setDataSource(
            new TypedLocalObjectReference("snapshot.storage.k8s.io", "VolumeSnapshot", snapshot));
    return claim;
  }

  /**
   * The pod bound to a node through the scheduler (a node selector, not {@code nodeName}, which
   * would bypass the scheduler and leave a WaitForFirstConsumer claim unbound).
   */
  private PodBuilder pinned(PodBuilder pod, String node) {
    return pod.editSpec().withNodeSelector(Map.of(HOSTNAME, hostname(node))).endSpec();
  }

  private String hostname(String node) {
    return client.nodes().withName(node).get().getMetadata().getLabels().get(HOSTNAME);
  }
}

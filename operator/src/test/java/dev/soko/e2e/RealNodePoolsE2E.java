package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.POOL;
import static dev.soko.e2e.DefaultInstall.POOL_FILESYSTEM;
import static dev.soko.e2e.DefaultInstall.POOL_PATH;
import static dev.soko.e2e.DefaultInstall.RELEASE;
import static dev.soko.e2e.Installed.condition;
import static dev.soko.e2e.Installed.conditionOf;
import static dev.soko.e2e.Installed.reason;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.PoolSummaryStatus;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.api.v1alpha1.StorageNodePool;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Pools on two real nodes: each node's StorageNode report against statfs of the pool on that node,
 * a pool that requires a mount point refused on a plain directory and taken up once a disk is
 * mounted there, and a pool with a node selector that exists only on the labelled node until the
 * other is labelled too. The default install, with spec changes applied by the tests; each test
 * puts the spec back.
 */
class RealNodePoolsE2E extends RealClusterTier {
  private static final String APPS = "e2e-pools";
  private static final Duration SHORT = Duration.ofSeconds(60);
  private static final Duration LONG = Duration.ofSeconds(180);

  /** How far a report's used bytes may be from a fresh statfs (the XFS log, the driver's files). */
  private static final long USED_TOLERANCE = 32L << 20;

  private String nodeB;

  RealNodePoolsE2E() {
    super(APPS);
  }

  @BeforeAll
  void installWithTwoNodes() throws Exception {
    assertThat(cluster.nodes)
        .as("the tier's cluster: two real nodes or more")
        .hasSizeGreaterThan(1);
    nodeB = cluster.nodes.get(1);
    DefaultInstall.helmInstallReady(cluster, client, APPS);
  }

  @Test
  @Order(1)
  void eachNodeReportsItsPoolWithTheNumbersStatfsGivesOnThatNode() throws Exception {
    String listed =
        cluster.kubectl(
            "get",
            "stn",
            "-l",
            StorageNode.LABEL_CLUSTER + "=" + RELEASE,
            "-o",
            "jsonpath={.items[*].metadata.name}");
    assertThat(listed.strip().split(" "))
        .as("`kubectl get stn`: one report per node, named <storagecluster>.<node>")
        .containsExactlyInAnyOrder(reportName(cluster.node), reportName(nodeB));
    for (String node : List.of(cluster.node, nodeB)) {
      StorageNode report =
          Await.until(
              "the report of " + node + " with its pool Ready",
              LONG,
              () -> report(node),
              r -> r != null && StorageNodePool.READY.equals(pool(r, POOL).state()));
      assertThat(report.getMetadata().getLabels())
          .containsEntry(StorageNode.LABEL_CLUSTER, RELEASE)
          .containsEntry(StorageNode.LABEL_NODE, node);
      assertThat(report.getNode()).isEqualTo(node);
      StorageNodePool pool = pool(report, POOL);
      LocalCluster.Statfs statfs = cluster.statfs(node, POOL_PATH);
      assertThat(pool.sizeBytes())
          .as("the size of %s on %s, as statfs gives it there", POOL_PATH, node)
          .isEqualTo(statfs.sizeBytes());
      assertThat(pool.usedBytes())
          .as("the bytes used on %s on %s, as statfs gives them there", POOL_PATH, node)
          .isBetween(statfs.usedBytes() - USED_TOLERANCE, statfs.usedBytes() + USED_TOLERANCE);
    }
    assertThat(cluster.statfs(nodeB, POOL_PATH).sizeBytes())
        .as("the two nodes' pools are two filesystems of their own")
        .isNotEqualTo(cluster.statfs(cluster.node, POOL_PATH).sizeBytes());
    PoolSummaryStatus summary =
        Await.until(
            "status.poolSummary to count both nodes Ready",
            LONG,
            () -> summary(POOL),
            s -> s != null && s.ready() == 2);
    assertThat(summary.refused()).isZero();
    assertThat(summary.notSelected()).isZero();
    assertThat(summary.notReporting()).isZero();
    assertThat(summary.sizeBytes())
        .isEqualTo(
            pool(report(cluster.node), POOL).sizeBytes() + pool(report(nodeB), POOL).sizeBytes());
  }

  @Test
  @Order(2)
  void aPoolThatNeedsAMountPointIsRefusedOnAPlainDirectoryAndTakenUpOnceADiskIsMounted()
      throws Exception {
    String disk = POOL_FILESYSTEM + "/disk";
    applyPools(
        List.of(Map.of("name", "disk", "path", disk, "requireMountPoint", true)),
        List.of(Map.of("name", "soko-disk", "pool", "disk", "fsType", "xfs")));
    for (String node : List.of(cluster.node, nodeB)) {
      StorageNodePool refused =
          Await.until(
              "pool disk Refused on " + node,
              LONG,
              () -> pool(report(node), "disk"),
              p -> p != null && StorageNodePool.REFUSED.equals(p.state()));
      // In the node plugin's container the hostPath is a bind mount of a subdirectory ("not the
      // root of a mounted filesystem").
      assertThat(refused.message()).contains(disk).contains("requireMountPoint is set");
    }
    Event event =
        Await.until(
                "a PoolRefused Warning event on Node " + cluster.node,
                SHORT,
                () -> poolRefusedEvents(cluster.node),
                list -> !list.isEmpty())
            .get(0);
    assertThat(event.getType()).isEqualTo("Warning");
    assertThat(event.getMessage())
        .contains("pool disk")
        .contains(RELEASE)
        .contains("requireMountPoint");
    StorageCluster degraded =
        Await.until(
            "Degraded=True PoolRefused",
            LONG,
            installed::storageCluster,
            sc -> "PoolRefused".equals(reason(sc, "Degraded")));
    assertThat(conditionOf(degraded, "Degraded").getStatus()).isEqualTo("True");
    assertThat(conditionOf(degraded, "Degraded").getMessage())
        .contains(cluster.node + "/disk")
        .contains(nodeB + "/disk");
    assertThat(condition(degraded, "Ready"))
        .as("a refused pool leaves Ready alone (docs/status.md): every node serves volumes")
        .isEqualTo("True");

    apps.create(apps.claim("on-disk", "soko-disk", "320Mi", false));
    apps.create(apps.pod("disk-user", "on-disk", false, false));
    Event pending = apps.awaitEvent("disk-user", "FailedScheduling", LONG);
    assertThat(pending.getMessage()).contains("enough free storage");
    assertThat(apps.claimNamed("on-disk").getStatus().getPhase()).isEqualTo("Pending");

    cluster.mountDisk(cluster.node, disk, "2G");
    long mounted = System.nanoTime();
    Await.until(
        "pool disk Ready on " + cluster.node + " after the disk is mounted",
        SHORT,
        () -> pool(report(cluster.node), "disk"),
        p -> p != null && StorageNodePool.READY.equals(p.state()));
    long seconds = Duration.ofNanos(System.nanoTime() - mounted).toSeconds();
    System.out.println(
        "e2e: pool disk Ready on " + cluster.node + " " + seconds + " s after mount");
    assertThat(seconds).as("the driver checks a refused pool again every 10 s").isLessThan(30);
    PersistentVolumeClaim bound = apps.awaitBound("on-disk", LONG);
    assertThat(apps.nodesOf(bound)).containsExactly(cluster.node);
    apps.awaitRunning("disk-user", LONG);
    apps.sh("disk-user", "echo on-the-disk > /data/f && sync");
    StorageNodePool used =
        Await.until(
            "the disk's volume in the report of " + cluster.node,
            LONG,
            () -> pool(report(cluster.node), "disk"),
            p -> p.volumes() != null && p.volumes() == 1);
    LocalCluster.Statfs statfs = cluster.statfs(cluster.node, disk);
    assertThat(used.sizeBytes()).as("the mounted disk's size").isEqualTo(statfs.sizeBytes());

    cluster.mountDisk(nodeB, disk, "2G");
    StorageCluster healed =
        Await.until(
            "Degraded=False once the disk is mounted on every node",
            LONG,
            installed::storageCluster,
            sc -> "False".equals(condition(sc, "Degraded")));
    assertThat(summaryOf(healed, "disk").ready()).isEqualTo(2);
    assertThat(summaryOf(healed, "disk").refused()).isZero();

    deleteApps("disk-user", "on-disk");
    applyPools(List.of(), List.of());
    cluster.umountDisk(cluster.node, disk);
    cluster.umountDisk(nodeB, disk);
  }

  @Test
  @Order(3)
  void aPoolWithANodeSelectorLivesOnlyOnTheNodesWithItsLabel() throws Exception {
    String label = "e2e.soko.dev/disk";
    label(nodeB, label, "fast");
    applyPools(
        List.of(
            Map.of(
                "name",
                "fast",
                "path",
                POOL_FILESYSTEM + "/fast",
                "nodeSelector",
                Map.of(label, "fast"))),
        List.of(Map.of("name", "soko-fast", "pool", "fast", "fsType", "xfs")));
    StorageNodePool elsewhere =
        Await.until(
            "pool fast NotSelected on " + cluster.node,
            LONG,
            () -> pool(report(cluster.node), "fast"),
            p -> p != null && StorageNodePool.NOT_SELECTED.equals(p.state()));
    assertThat(elsewhere.message()).contains("no label " + label);
    Await.until(
        "pool fast Ready on " + nodeB,
        LONG,
        () -> pool(report(nodeB), "fast"),
        p -> p != null && StorageNodePool.READY.equals(p.state()));
    PoolSummaryStatus summary =
        Await.until(
            "status.poolSummary of fast: 1 Ready, 1 NotSelected",
            LONG,
            () -> summary("fast"),
            s -> s != null && s.ready() == 1 && s.notSelected() == 1);
    assertThat(summary.refused()).isZero();
    assertThat(condition(installed.storageCluster(), "Degraded"))
        .as("a pool not meant for a node is no problem")
        .isEqualTo("False");

    apps.create(apps.claim("fast-b", "soko-fast", "320Mi", false));
    apps.create(apps.pod("fast-b", "fast-b", false, false));
    PersistentVolumeClaim onB = apps.awaitBound("fast-b", LONG);
    assertThat(apps.nodesOf(onB))
        .as("the claim's volume is on the only node with the pool")
        .containsExactly(nodeB);
    apps.awaitRunning("fast-b", LONG);
    assertThat(apps.sh("fast-b", "echo fast > /data/f && sync && cat /data/f"))
        .as("the pod on the pool's only node writes to its volume and reads it back")
        .isEqualTo("fast");

    label(cluster.node, label, "fast");
    long labelled = System.nanoTime();
    Await.until(
        "pool fast Ready on " + cluster.node + " once it is labelled",
        SHORT,
        () -> pool(report(cluster.node), "fast"),
        p -> StorageNodePool.READY.equals(p.state()));
    System.out.println(
        "e2e: pool fast Ready on "
            + cluster.node
            + " "
            + Duration.ofNanos(System.nanoTime() - labelled).toSeconds()
            + " s after the label");
    Await.until(
        "status.poolSummary of fast: 2 Ready",
        LONG,
        () -> summary("fast"),
        s -> s != null && s.ready() == 2 && s.notSelected() == 0);
    apps.create(apps.claim("fast-a", "soko-fast", "320Mi", false));
    PodBuilder onA = apps.pod("fast-a", "fast-a", false, false);
    onA.editSpec().addToNodeSelector("kubernetes.io/hostname", cluster.node).endSpec();
    apps.create(onA);
    apps.awaitRunning("fast-a", LONG);
    assertThat(apps.nodesOf(apps.claimNamed("fast-a"))).containsExactly(cluster.node);
    assertThat(apps.sh("fast-a", "echo here > /data/f && cat /data/f")).isEqualTo("here");

    deleteApps("fast-a", "fast-a");
    deleteApps("fast-b", "fast-b");
    applyPools(List.of(), List.of());
    label(cluster.node, label, null);
    label(nodeB, label, null);
  }

  /**
   * The btrfs-subvolume backend on a real node: a volume is a subvolume of the pool's btrfs disk
   * with its capacity as the qgroup limit, so a pod's writes stop at the claim's size, an expansion
   * lets it write more without a restart, and a snapshot restores into a second volume. The pool
   * lives only on the labelled node, which has the btrfs disk.
   */
  @Test
  @Order(4)
  void aBtrfsPoolGivesVolumesAHardLimitOnlineGrowthAndSnapshots() throws Exception {
    String label = "e2e.soko.dev/btrfs";
    String disk = "/var/lib/soko-btrfs";
    cluster.mountDisk(cluster.node, disk, "2G", "btrfs");
    label(cluster.node, label, "yes");
    applyPools(
        List.of(
            Map.of(
                "name",
                "btrfs",
                "path",
                disk + "/pool",
                "backend",
                "BtrfsSubvolume",
                "nodeSelector",
                Map.of(label, "yes"))),
        List.of(Map.of("name", "soko-btrfs", "pool", "btrfs")));
    Await.until(
        "pool btrfs Ready on " + cluster.node,
        LONG,
        () -> pool(report(cluster.node), "btrfs"),
        p -> p != null && StorageNodePool.READY.equals(p.state()));

    apps.create(apps.claim("sub", "soko-btrfs", "64Mi", false));
    apps.create(apps.pod("sub-writer", "sub", false, false));
    apps.awaitRunning("sub-writer", LONG);
    assertThat(apps.sh("sub-writer", "grep ' /data ' /proc/mounts"))
        .as("the volume is a subvolume of the pool's btrfs, not a filesystem of its own")
        .contains(" btrfs ");
    apps.sh("sub-writer", "dd if=/dev/urandom of=/data/a bs=1M count=40 conv=fsync 2>/dev/null");
    Workloads.Result over =
        apps.exec(
            APPS, "sub-writer", "app", "dd if=/dev/zero of=/data/b bs=1M count=40 conv=fsync 2>&1");
    assertThat(over.exitCode()).as("writing past the claim's 64Mi fails").isNotZero();
    assertThat(over.out()).contains("quota exceeded");
    String sum =
        apps.sh("sub-writer", "rm -f /data/b && sync && sha256sum /data/a | cut -d' ' -f1");

    apps.resize("sub", "128Mi");
    Await.until(
        "PVC sub capacity 128Mi", LONG, () -> apps.capacityBytes("sub"), b -> b == 128L << 20);
    apps.sh("sub-writer", "dd if=/dev/urandom of=/data/b bs=1M count=40 conv=fsync 2>/dev/null");
    assertThat(apps.sh("sub-writer", "du -sm /data | cut -f1").trim())
        .as("80 MiB fit after the online expansion, in the same pod")
        .isEqualTo("80");

    apps.snapshot("sub-snap", "sub", DefaultInstall.SNAPSHOTS, LONG);
    apps.create(apps.restoredClaim("sub-restored", "soko-btrfs", "128Mi", "sub-snap"));
    apps.create(apps.pod("sub-reader", "sub-restored", false, false));
    apps.awaitRunning("sub-reader", LONG);
    assertThat(apps.sh("sub-reader", "sha256sum /data/a | cut -d' ' -f1"))
        .as("the restored volume holds the snapshot's bytes")
        .isEqualTo(sum);
    apps.sh("sub-reader", "rm /data/a && sync");
    assertThat(apps.sh("sub-writer", "sha256sum /data/a | cut -d' ' -f1"))
        .as("a restored volume is independent of its source")
        .isEqualTo(sum);

    deleteApps("sub-reader", "sub-restored");
    apps.deleteSnapshots();
    deleteApps("sub-writer", "sub");
    applyPools(List.of(), List.of());
    label(cluster.node, label, null);
    cluster.umountDisk(cluster.node, disk);
  }

  @Test
  @Order(5)
  void uninstallRemovesTheReports() throws Exception {
    client.resources(StorageCluster.class).withName(RELEASE).delete();
    Await.until(
        "the StorageCluster's reports deleted",
        LONG,
        () ->
            client
                .resources(StorageNode.class)
                .withLabel(StorageNode.LABEL_CLUSTER, RELEASE)
                .list()
                .getItems(),
        List::isEmpty);
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
  }

  // --- helpers --------------------------------------------------------------------------------

  /**
   * Sets spec.pools and spec.storageClasses to the default install's plus the given ones (a merge
   * patch replaces lists whole), then waits until every node runs a driver with them: the node
   * plugin rolled out on every node.
   */
  private void applyPools(List<Map<String, Object>> pools, List<Map<String, Object>> classes)
      throws Exception {
    List<Map<String, Object>> allPools = new ArrayList<>(DefaultInstall.POOLS);
    allPools.addAll(pools);
    List<Map<String, Object>> allClasses = new ArrayList<>(DefaultInstall.CLASSES);
    allClasses.addAll(classes);
    long generation = installed.nodePluginDaemonSet().getMetadata().getGeneration();
    client
        .resources(StorageCluster.class)
        .withName(RELEASE)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            Serialization.asJson(
                Map.of("spec", Map.of("pools", allPools, "storageClasses", allClasses))));
    Await.until(
        "the node plugin rolled out with the new pools",
        LONG,
        installed::nodePluginDaemonSet,
        ds ->
            ds.getMetadata().getGeneration() > generation
                && Objects.equals(
                    ds.getStatus().getObservedGeneration(), ds.getMetadata().getGeneration())
                && Objects.equals(ds.getStatus().getUpdatedNumberScheduled(), cluster.nodes.size())
                && Objects.equals(ds.getStatus().getNumberReady(), cluster.nodes.size())
                && Objects.requireNonNullElse(ds.getStatus().getNumberUnavailable(), 0) == 0);
    // The status catches up with the rollout, node by node.
    Await.until(
        "StorageCluster Ready=True after the rollout",
        LONG,
        installed::storageCluster,
        sc -> "True".equals(condition(sc, "Ready")));
  }

  /** Sets a label on a Node, or removes it (value null). */
  private void label(String node, String key, String value) {
    Map<String, Object> labels = new HashMap<>();
    labels.put(key, value);
    client
        .nodes()
        .withName(node)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            Serialization.asJson(Map.of("metadata", Map.of("labels", labels))));
  }

  private void deleteApps(String pod, String claim) {
    client.pods().inNamespace(APPS).withName(pod).withGracePeriod(0).delete();
    PersistentVolumeClaim c = apps.claimNamed(claim);
    client.persistentVolumeClaims().inNamespace(APPS).withName(claim).delete();
    if (c != null && c.getSpec().getVolumeName() != null) {
      Await.until(
          "the volume of " + claim + " deleted",
          LONG,
          () -> client.persistentVolumes().withName(c.getSpec().getVolumeName()).get(),
          Objects::isNull);
    }
  }

  private static String reportName(String node) {
    return RELEASE + "." + node;
  }

  private StorageNode report(String node) {
    return client.resources(StorageNode.class).withName(reportName(node)).get();
  }

  /** The named pool in a report, or null. */
  private static StorageNodePool pool(StorageNode report, String name) {
    if (report == null || report.getPools() == null) {
      return null;
    }
    return report.getPools().stream().filter(p -> name.equals(p.name())).findFirst().orElse(null);
  }

  private PoolSummaryStatus summary(String pool) {
    return summaryOf(installed.storageCluster(), pool);
  }

  private static PoolSummaryStatus summaryOf(StorageCluster sc, String pool) {
    if (sc == null || sc.getStatus() == null || sc.getStatus().getPoolSummary() == null) {
      return null;
    }
    return sc.getStatus().getPoolSummary().stream()
        .filter(s -> pool.equals(s.pool()))
        .findFirst()
        .orElse(null);
  }

  private List<Event> poolRefusedEvents(String node) {
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> "Node".equals(e.getInvolvedObject().getKind()))
        .filter(e -> node.equals(e.getInvolvedObject().getName()))
        .filter(e -> "PoolRefused".equals(e.getReason()))
        .filter(e -> e.getMessage() != null && e.getMessage().contains("pool disk"))
        .toList();
  }
}

package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.OPERATOR;
import static dev.soko.e2e.DefaultInstall.RELEASE;
import static dev.soko.e2e.DefaultInstall.SNAPSHOTS;
import static dev.soko.e2e.Installed.condition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.support.SupportBundle;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The upgrade from the newest release to the working tree, by {@code helm upgrade}, on real nodes,
 * while pods write and fsync to volumes of every kind (xfs, ext4, a raw block device, a btrfs
 * subvolume): no write fails, no writer restarts, every volume stays mounted, and what was written
 * before and during the upgrade reads back after it. Snapshots taken before restore after it; the
 * volumes made before are expanded, cloned and deleted by the new driver, which reads the records
 * the old one wrote.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(FailureReport.class)
class UpgradeE2E {
  private static final String APPS = "e2e-upgrade";
  private static final Duration LONG = Duration.ofSeconds(240);
  private static final String BTRFS_DISK = "/var/lib/soko-upgrade-btrfs";
  private static final String BTRFS_LABEL = "e2e.soko.dev/upgrade-btrfs";
  private static final String BTRFS_CLASS = "soko-btrfs";

  /** Writer pod and claim names by volume kind, each with its class. */
  private static final Map<String, String> FILESYSTEM_WRITERS =
      Map.of("xfs", DefaultInstall.XFS, "ext4", DefaultInstall.EXT4, "btrfs", BTRFS_CLASS);

  private static final String BLOCK = "block";

  /** Appends a line per step and fsyncs it; the first failed write ends the container. */
  private static final String FILESYSTEM_WRITER =
      "set -e; trap 'exit 0' TERM; i=0; while true; do i=$((i+1)); echo $i >> /data/log;"
          + " sync -d /data/log; sleep 0.2; done";

  /** Writes the step number to the device's second 4 KiB block with fsync each time. */
  private static final String BLOCK_WRITER =
      "set -e; trap 'exit 0' TERM; i=0; while true; do i=$((i+1)); echo $i |"
          + " dd of=/dev/xvda bs=4096 seek=1 conv=notrunc,fsync status=none; sleep 0.2; done";

  private LocalCluster cluster;
  private LocalCluster.PreviousRelease previous;
  private KubernetesClient client;
  private Workloads apps;
  private Installed installed;
  private final Map<String, String> beforeSums = new LinkedHashMap<>();
  private final Map<String, Long> stepsBefore = new LinkedHashMap<>();

  @BeforeAll
  void connect() throws Exception {
    cluster = LocalCluster.fromEnvironment();
    previous = LocalCluster.previousRelease();
    client = cluster.client();
    apps = new Workloads(client, APPS, cluster.imageRegistry);
    installed = new Installed(client);
  }

  @AfterAll
  void close() {
    if (client != null) {
      client.close();
    }
  }

  @Test
  @Order(1)
  void thePreviousReleaseInstallsAndItsPodsWriteToVolumesOfEveryKind() throws Exception {
    assertThat(previous.version()).isNotEqualTo(cluster.projectVersion);
    cluster.mountDisk(cluster.node, BTRFS_DISK, "1G", "btrfs");
    cluster.kubectl("label", "node", cluster.node, BTRFS_LABEL + "=yes", "--overwrite");
    helm("install", previous.chart());
    Await.until(
        "StorageCluster " + RELEASE + " of release " + previous.version() + " Ready=True",
        LONG,
        installed::storageCluster,
        sc -> "True".equals(condition(sc, "Ready")));
    assertThat(nodePluginImages()).allMatch(image -> image.endsWith(":" + previous.version()));
    client
        .resource(new NamespaceBuilder().withNewMetadata().withName(APPS).endMetadata().build())
        .serverSideApply();

    for (var writer : FILESYSTEM_WRITERS.entrySet()) {
      apps.create(apps.claim(writer.getKey(), writer.getValue(), "320Mi", false));
      apps.create(writerPod(writer.getKey(), false, FILESYSTEM_WRITER));
    }
    apps.create(apps.claim(BLOCK, DefaultInstall.XFS, "64Mi", true));
    apps.create(writerPod(BLOCK, true, BLOCK_WRITER));
    for (String writer : writers()) {
      apps.awaitRunning(writer, LONG);
    }
    for (String fs : FILESYSTEM_WRITERS.keySet()) {
      apps.sh(fs, "head -c 1048576 /dev/urandom > /data/before && sync -d /data/before");
      beforeSums.put(fs, apps.sh(fs, "sha256sum /data/before | cut -d' ' -f1"));
    }
    apps.sh(
        BLOCK,
        "dd if=/dev/urandom of=/dev/xvda bs=4096 seek=16 count=256 conv=notrunc,fsync status=none");
    beforeSums.put(BLOCK, blockSum());
    apps.snapshot("xfs-before", "xfs", SNAPSHOTS, LONG);
    apps.snapshot("btrfs-before", "btrfs", SNAPSHOTS, LONG);
    for (String writer : writers()) {
      stepsBefore.put(writer, steps(writer));
    }
    assertThat(stepsBefore.values()).allMatch(steps -> steps > 0);
  }

  @Test
  @Order(2)
  void helmUpgradeRollsEveryNodeWhileTheWritersGoOnAndNoneRestarts() throws Exception {
    // Helm never changes an installed CRD: the new release's schema is applied first, as the
    // operations guide says.
    cluster.kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        LocalCluster.REPO.resolve("helm/soko/crds").toString());
    helm("upgrade", LocalCluster.REPO.resolve("helm/soko"));
    Await.until(
        "the node plugin rolled out with the images of " + cluster.projectVersion,
        LONG,
        installed::nodePluginDaemonSet,
        this::rolledOut);
    Await.until(
        "every node's StorageNode written by the driver of " + cluster.projectVersion,
        LONG,
        () -> client.resources(StorageNode.class).list().getItems(),
        reports ->
            reports.size() == cluster.nodes.size()
                && reports.stream()
                    .allMatch(r -> cluster.projectVersion.equals(r.getDriverVersion())));
    Await.until(
        "StorageCluster Ready=True after the upgrade",
        LONG,
        installed::storageCluster,
        sc -> "True".equals(condition(sc, "Ready")));

    for (String writer : writers()) {
      Pod pod = client.pods().inNamespace(APPS).withName(writer).get();
      ContainerStatus app = pod.getStatus().getContainerStatuses().get(0);
      assertThat(app.getRestartCount()).as(writer + ": no write failed, so no restart").isZero();
      assertThat(app.getState().getRunning()).as(writer + " running").isNotNull();
      assertThat(steps(writer))
          .as(writer + ": the writes went on through the upgrade")
          .isGreaterThan(stepsBefore.get(writer));
    }
    for (String fs : FILESYSTEM_WRITERS.keySet()) {
      assertThat(apps.sh(fs, "grep -c ' /data ' /proc/mounts"))
          .as(fs + " still mounted")
          .isEqualTo("1");
      assertThat(apps.sh(fs, "awk 'NR != $1 {print NR; exit}' /data/log"))
          .as(fs + ": every line written before, during and after, in order, none lost")
          .isEmpty();
      assertThat(apps.sh(fs, "sha256sum /data/before | cut -d' ' -f1"))
          .isEqualTo(beforeSums.get(fs));
    }
    assertThat(blockSum())
        .as("the block device's data from before")
        .isEqualTo(beforeSums.get(BLOCK));
  }

  @Test
  @Order(3)
  void theNewDriverServesTheOldVolumesAndSnapshots() throws Exception {
    // A snapshot and a clone live on their source's node: their pods are pinned there
    // (docs/snapshots.md).
    apps.create(apps.restoredClaim("xfs-restored", DefaultInstall.XFS, "320Mi", "xfs-before"));
    apps.create(pinnedBeside(apps.pod("xfs-restored", "xfs-restored", false, false), "xfs"));
    apps.create(apps.restoredClaim("btrfs-restored", BTRFS_CLASS, "320Mi", "btrfs-before"));
    apps.create(pinnedBeside(apps.pod("btrfs-restored", "btrfs-restored", false, false), "btrfs"));
    PersistentVolumeClaim clone = apps.claim("ext4-clone", DefaultInstall.EXT4, "320Mi", false);
    clone
        .getSpec()
        .setDataSource(new TypedLocalObjectReference(null, "PersistentVolumeClaim", "ext4"));
    apps.create(clone);
    apps.create(pinnedBeside(apps.pod("ext4-clone", "ext4-clone", false, false), "ext4"));
    apps.create(apps.claim("fresh", DefaultInstall.XFS, "320Mi", false));
    apps.create(apps.pod("fresh", "fresh", false, false));
    for (String pod : List.of("xfs-restored", "btrfs-restored", "ext4-clone", "fresh")) {
      apps.awaitRunning(pod, LONG);
    }
    assertThat(apps.sh("xfs-restored", "sha256sum /data/before | cut -d' ' -f1"))
        .as("a snapshot taken before the upgrade, restored after it")
        .isEqualTo(beforeSums.get("xfs"));
    assertThat(apps.sh("btrfs-restored", "sha256sum /data/before | cut -d' ' -f1"))
        .isEqualTo(beforeSums.get("btrfs"));
    assertThat(apps.sh("ext4-clone", "sha256sum /data/before | cut -d' ' -f1"))
        .as("a clone of a volume made before the upgrade")
        .isEqualTo(beforeSums.get("ext4"));
    apps.sh("fresh", "echo new > /data/new && sync -d /data/new");
    assertThat(apps.sh("fresh", "cat /data/new")).isEqualTo("new");

    long before = apps.capacityBytes("xfs");
    apps.resize("xfs", "640Mi");
    Await.until(
        "the volume made before the upgrade grown to 640Mi",
        LONG,
        () -> apps.capacityBytes("xfs"),
        bytes -> bytes >= 640L << 20);
    assertThat(before).isLessThan(640L << 20);

    String blockVolume = apps.claimNamed(BLOCK).getSpec().getVolumeName();
    client.pods().inNamespace(APPS).withName(BLOCK).delete();
    Await.until(
        "pod " + BLOCK + " gone",
        LONG,
        () -> client.pods().inNamespace(APPS).withName(BLOCK).get(),
        Objects::isNull);
    client.persistentVolumeClaims().inNamespace(APPS).withName(BLOCK).delete();
    Await.until(
        "the block volume made before the upgrade deleted by the new driver",
        LONG,
        () -> client.persistentVolumes().withName(blockVolume).get(),
        Objects::isNull);
  }

  /**
   * The support bundle of the upgraded installation, through the API only: the StorageCluster and
   * every node's report, each node plugin's driver log, and each node's mounts as its node plugin
   * sees them, with the writers' volumes in them; no Secret, not even one in Soko's namespaces.
   */
  @Test
  @Order(4)
  void theSupportBundleHoldsEachNodesViewAndNoSecret() throws Exception {
    String secretValue = "e2e-secret-" + UUID.randomUUID();
    for (String ns : List.of(OPERATOR, DefaultInstall.SYSTEM)) {
      client
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName("e2e-bundle-secret")
                  .withNamespace(ns)
                  .endMetadata()
                  .addToStringData("password", secretValue)
                  .build())
          .create();
    }
    Path dir = Files.createTempDirectory("soko-e2e-bundle");
    Path archive = dir.resolve("bundle.tar.gz");
    SupportBundle.Summary summary = SupportBundle.write(client, archive, Duration.ofHours(1));
    assertThat(summary.failures()).as("steps of the bundle that failed").isEmpty();
    Path tree = Files.createDirectories(dir.resolve("tree"));
    LocalCluster.run(List.of("tar", "-xzf", archive.toString(), "-C", tree.toString()), 60);

    assertThat(tree.resolve("cluster/StorageCluster/" + RELEASE + ".yaml")).exists();
    for (String node : cluster.nodes) {
      assertThat(tree.resolve("cluster/StorageNode/" + RELEASE + "." + node + ".yaml")).exists();
      assertThat(tree.resolve("nodes/" + node + "/loop-devices.json")).exists();
      assertThat(tree.resolve("nodes/" + node + "/pools.txt")).content().contains("default");
    }
    for (Pod plugin : nodePluginPods()) {
      assertThat(
              tree.resolve(
                  "logs/"
                      + DefaultInstall.SYSTEM
                      + "/"
                      + plugin.getMetadata().getName()
                      + "/soko-driver.log"))
          .content()
          .contains("registered with the kubelet");
    }
    for (String writer : List.of("xfs", "ext4")) {
      String node = apps.nodesOf(apps.claimNamed(writer)).get(0);
      assertThat(tree.resolve("nodes/" + node + "/mountinfo"))
          .as("the node plugin's mounts on " + node + " hold the " + writer + " writer's volume")
          .content()
          .contains(apps.claimNamed(writer).getSpec().getVolumeName());
    }
    String encoded =
        Base64.getEncoder().encodeToString(secretValue.getBytes(StandardCharsets.UTF_8));
    try (var files = Files.walk(tree)) {
      for (Path file : files.filter(Files::isRegularFile).toList()) {
        assertThat(file.getFileName().toString()).doesNotContain("e2e-bundle-secret");
        String text = Files.readString(file, StandardCharsets.ISO_8859_1);
        assertThat(text).as(file + " holds no Secret value").doesNotContain(secretValue, encoded);
      }
    }
    for (String ns : List.of(OPERATOR, DefaultInstall.SYSTEM)) {
      client.secrets().inNamespace(ns).withName("e2e-bundle-secret").delete();
    }
  }

  @Test
  @Order(5)
  void uninstallRemovesEverything() throws Exception {
    client.pods().inNamespace(APPS).delete();
    Await.until(
        "the workloads' pods gone",
        LONG,
        () -> client.pods().inNamespace(APPS).list().getItems(),
        List::isEmpty);
    // Claims first: a claim restoring from a snapshot holds the snapshot until it goes.
    client.persistentVolumeClaims().inNamespace(APPS).delete();
    apps.deleteSnapshots();
    Await.until(
        "every PV of the driver gone",
        LONG,
        () -> client.persistentVolumes().list().getItems(),
        List::isEmpty);
    Await.until(
        "every VolumeSnapshot gone, while the driver still runs to delete their snapshots",
        LONG,
        () ->
            client
                .genericKubernetesResources(Workloads.VOLUME_SNAPSHOTS)
                .inNamespace(APPS)
                .list()
                .getItems(),
        List::isEmpty);
    client.resources(dev.soko.api.v1alpha1.StorageCluster.class).withName(RELEASE).delete();
    Await.until("StorageCluster gone", LONG, installed::storageCluster, Objects::isNull);
    cluster.helm("uninstall", RELEASE, "--namespace", OPERATOR, "--wait", "--timeout", "2m");
    client.namespaces().withName(APPS).delete();
    Await.until(
        "namespace " + APPS + " gone",
        LONG,
        () -> client.namespaces().withName(APPS).get(),
        Objects::isNull);
    cluster.kubectl("label", "node", cluster.node, BTRFS_LABEL + "-");
    cluster.umountDisk(cluster.node, BTRFS_DISK);
  }

  // --- helpers --------------------------------------------------------------------------------

  private List<String> writers() {
    return List.of("xfs", "ext4", "btrfs", BLOCK);
  }

  /** {@code helm install} or {@code helm upgrade} of {@code chart} with the tier's values. */
  private void helm(String verb, Path chart) throws Exception {
    DefaultInstall.helm(cluster, verb, chart, values());
  }

  /** The default install's values, with a btrfs pool on the first node and its class. */
  private String values() {
    return DefaultInstall.values(cluster.imageRegistry)
        .replace(
            "    storageClasses:\n",
            """
                  - name: btrfs
                    path: %s/pool
                    backend: BtrfsSubvolume
                    nodeSelector:
                      %s: "yes"
                storageClasses:
                  - name: %s
                    pool: btrfs
            """
                .formatted(BTRFS_DISK, BTRFS_LABEL, BTRFS_CLASS));
  }

  private PodBuilder writerPod(String name, boolean block, String script) {
    PodBuilder pod = apps.pod(name, name, block, false);
    pod.editSpec().editFirstContainer().withCommand("sh", "-c", script).endContainer().endSpec();
    if (name.equals("btrfs")) {
      pod.editSpec().addToNodeSelector(BTRFS_LABEL, "yes").endSpec();
    }
    return pod;
  }

  /** {@code pod} with a node selector for the node of claim {@code source}'s volume. */
  private PodBuilder pinnedBeside(PodBuilder pod, String source) {
    String node = apps.nodesOf(apps.claimNamed(source)).get(0);
    return pod.editSpec().addToNodeSelector("kubernetes.io/hostname", node).endSpec();
  }

  /** How many steps the writer has made: lines of its log, or the number on its device. */
  private long steps(String writer) {
    String out =
        writer.equals(BLOCK)
            ? apps.sh(writer, "dd if=/dev/xvda bs=4096 skip=1 count=1 status=none | head -1")
            : apps.sh(writer, "wc -l < /data/log");
    return Long.parseLong(out.trim());
  }

  private String blockSum() {
    return apps.sh(
        BLOCK, "dd if=/dev/xvda bs=4096 skip=16 count=256 status=none | sha256sum | cut -d' ' -f1");
  }

  private List<Pod> nodePluginPods() {
    return client
        .pods()
        .inNamespace(DefaultInstall.SYSTEM)
        .withLabels(installed.nodePluginDaemonSet().getSpec().getSelector().getMatchLabels())
        .list()
        .getItems();
  }

  private List<String> nodePluginImages() {
    return nodePluginPods().stream()
        .flatMap(p -> p.getSpec().getContainers().stream())
        .filter(c -> c.getName().equals("soko-driver"))
        .map(c -> c.getImage())
        .toList();
  }

  private boolean rolledOut(DaemonSet ds) {
    var status = ds.getStatus();
    int nodes = cluster.nodes.size();
    return ds.getSpec().getTemplate().getSpec().getContainers().stream()
            .anyMatch(c -> c.getImage().endsWith("/soko-driver:" + cluster.projectVersion))
        && Objects.equals(status.getObservedGeneration(), ds.getMetadata().getGeneration())
        && Objects.equals(status.getUpdatedNumberScheduled(), nodes)
        && Objects.equals(status.getNumberReady(), nodes)
        && Objects.requireNonNullElse(status.getNumberUnavailable(), 0) == 0
        && nodePluginImages().size() == nodes
        && nodePluginImages().stream().allMatch(i -> i.endsWith(":" + cluster.projectVersion));
  }
}

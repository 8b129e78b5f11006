package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.OPERATOR;
import static dev.soko.e2e.DefaultInstall.RELEASE;
import static dev.soko.e2e.DefaultInstall.SNAPSHOTS;
import static dev.soko.e2e.Installed.condition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.crds.CrdRelease;
import dev.soko.operator.crds.CrdUpgrade;
import dev.soko.operator.harness.Await;
import dev.soko.operator.support.SupportBundle;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upgrade from the newest release to the working tree, by {@code helm upgrade}, on real nodes:
 * first the operator alone (its operands pinned to the release), which restarts no pod, then the
 * operands, while pods write and fsync to volumes of every kind (xfs, ext4, a raw block device, a
 * btrfs subvolume): no write fails, no writer restarts, every volume stays mounted, and what was
 * written before and during the upgrade reads back after it. Snapshots taken before restore after
 * it; the volumes made before are expanded, cloned and deleted by the new driver, which reads the
 * records the old one wrote.
 */
class UpgradeE2E extends RealClusterTier {
  private static final String APPS = "e2e-upgrade";
  private static final Duration LONG = Duration.ofSeconds(240);
  private static final BtrfsPool BTRFS = new BtrfsPool("upgrade");

  /** Writer pod and claim names by volume kind, each with its class. */
  private static final Map<String, String> FILESYSTEM_WRITERS =
      Map.of("xfs", DefaultInstall.XFS, "ext4", DefaultInstall.EXT4, "btrfs", BtrfsPool.CLASS);

  private LocalCluster.PreviousRelease previous;
  private Writers writers;

  UpgradeE2E() {
    super(APPS);
  }

  @BeforeAll
  void prepare() throws Exception {
    previous = LocalCluster.previousRelease();
    writers =
        new Writers(
            client,
            apps,
            FILESYSTEM_WRITERS,
            DefaultInstall.XFS,
            Map.of("btrfs", BTRFS.nodeSelector()));
  }

  @Test
  @Order(1)
  void thePreviousReleaseInstallsAndItsPodsWriteToVolumesOfEveryKind() throws Exception {
    assertThat(previous.version()).isNotEqualTo(cluster.projectVersion);
    BTRFS.mountOn(cluster);
    DefaultInstall.replaceCrds(client, previous.chart());
    helm("install", previous.chart(), null);
    Await.until(
        "StorageCluster " + RELEASE + " of release " + previous.version() + " Ready=True",
        LONG,
        installed::storageCluster,
        sc -> "True".equals(condition(sc, "Ready")));
    assertThat(installed.nodePluginImages())
        .allMatch(image -> image.endsWith(":" + previous.version()));
    apps.createNamespace();

    writers.start(LONG);
    apps.snapshot("xfs-before", "xfs", SNAPSHOTS, LONG);
    apps.snapshot("btrfs-before", "btrfs", SNAPSHOTS, LONG);
  }

  /**
   * The operator's own upgrade, its operands held at the previous release ({@code driver.image}
   * pinned to the image the nodes run): the new operator re-renders every object and restarts no
   * pod whose render did not change. Only the operator's own pod is replaced.
   */
  @Test
  @Order(2)
  void theNewOperatorWithTheOldOperandsRestartsNoPod() throws Exception {
    // Helm never changes an installed CRD; the new operator brings this release's at its start
    // (crds.upgrade, on by default): no manual step.
    for (String crd : CrdUpgrade.NAMES) {
      assertThat(crdRelease(crd))
          .as(crd + " as release " + previous.version() + " left it")
          .isNull();
    }
    String oldDriver = installed.nodePluginImages().get(0);
    long nodePlugin = generation(installed.nodePluginDaemonSet());
    long controller = generation(installed.controllerDeployment());
    Map<String, String> pods = podsAndRestarts();
    assertThat(pods.keySet())
        .as("the node plugin, controller and writer pods")
        .hasSizeGreaterThan(cluster.nodes.size() + writers.names().size());

    helm("upgrade", LocalCluster.REPO.resolve("helm/soko"), oldDriver);
    Await.until(
        "the StorageCluster reconciled by the operator of " + cluster.projectVersion,
        LONG,
        installed::storageCluster,
        sc ->
            sc.getStatus() != null
                && cluster.projectVersion.equals(sc.getStatus().getOperatorVersion())
                && Objects.equals(
                    sc.getStatus().getObservedGeneration(), sc.getMetadata().getGeneration())
                && "True".equals(condition(sc, "Ready")));

    assertThat(installed.nodePluginImages()).containsOnly(oldDriver);
    assertThat(generation(installed.nodePluginDaemonSet()))
        .as("the node plugin's template, as the new operator renders it for the old driver")
        .isEqualTo(nodePlugin);
    assertThat(generation(installed.controllerDeployment()))
        .as("the controller's template, as the new operator renders it for the old driver")
        .isEqualTo(controller);
    assertThat(podsAndRestarts()).as("each pod's UID and restarts").isEqualTo(pods);
    for (String crd : CrdUpgrade.NAMES) {
      assertThat(crdRelease(crd))
          .as(crd + " upgraded by the new operator's start")
          .isEqualTo(cluster.projectVersion);
    }
  }

  @Test
  @Order(3)
  void helmUpgradeRollsEveryNodeWhileTheWritersGoOnAndNoneRestarts() throws Exception {
    helm("upgrade", LocalCluster.REPO.resolve("helm/soko"), null);
    Await.until(
        "the node plugin rolled out with the images of " + cluster.projectVersion,
        LONG,
        installed::nodePluginDaemonSet,
        ds -> installed.rolledOutTo(ds, cluster.projectVersion, cluster.nodes.size()));
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

    writers.assertNothingLostThrough("the upgrade");
  }

  @Test
  @Order(4)
  void theNewDriverServesTheOldVolumesAndSnapshots() throws Exception {
    // A snapshot and a clone live on their source's node: their pods are pinned there
    // (docs/snapshots.md).
    apps.create(apps.restoredClaim("xfs-restored", DefaultInstall.XFS, "320Mi", "xfs-before"));
    apps.create(pinnedBeside(apps.pod("xfs-restored", "xfs-restored", false, false), "xfs"));
    apps.create(apps.restoredClaim("btrfs-restored", BtrfsPool.CLASS, "320Mi", "btrfs-before"));
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
    assertThat(writers.beforeSum("xfs-restored"))
        .as("a snapshot taken before the upgrade, restored after it")
        .isEqualTo(writers.recordedSum("xfs"));
    assertThat(writers.beforeSum("btrfs-restored")).isEqualTo(writers.recordedSum("btrfs"));
    assertThat(writers.beforeSum("ext4-clone"))
        .as("a clone of a volume made before the upgrade")
        .isEqualTo(writers.recordedSum("ext4"));
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

    String blockVolume = apps.claimNamed(Writers.BLOCK).getSpec().getVolumeName();
    client.pods().inNamespace(APPS).withName(Writers.BLOCK).delete();
    Await.until(
        "pod " + Writers.BLOCK + " gone",
        LONG,
        () -> client.pods().inNamespace(APPS).withName(Writers.BLOCK).get(),
        Objects::isNull);
    client.persistentVolumeClaims().inNamespace(APPS).withName(Writers.BLOCK).delete();
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
  @Order(5)
  void theSupportBundleHoldsEachNodesViewAndNoSecret(@TempDir Path dir) throws Exception {
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
    for (Pod plugin : installed.nodePluginPods()) {
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
  @Order(6)
  void uninstallRemovesEverything() throws Exception {
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
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
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
    BTRFS.removeFrom(cluster);
  }

  // --- helpers --------------------------------------------------------------------------------

  /**
   * {@code helm install} or {@code helm upgrade} of {@code chart} with the tier's values, the
   * driver pinned to {@code driverImage} unless it is null.
   */
  private void helm(String verb, Path chart, String driverImage) throws Exception {
    DefaultInstall.helm(cluster, verb, chart, values(driverImage));
  }

  /**
   * The default install's values, with the btrfs pool, and {@code spec.driver.image} when {@code
   * driverImage} is not null.
   */
  private String values(String driverImage) {
    String pinned = driverImage == null ? "" : "driver:\n  image: %s\n".formatted(driverImage);
    return DefaultInstall.values(cluster.imageRegistry, pinned + BTRFS.spec());
  }

  /** The release annotation of an installed CRD: null for the CRDs of 0.2.0 and before. */
  private String crdRelease(String crd) {
    Map<String, String> annotations =
        client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName(crd)
            .get()
            .getMetadata()
            .getAnnotations();
    return annotations == null ? null : annotations.get(CrdRelease.ANNOTATION);
  }

  private static long generation(HasMetadata object) {
    return object.getMetadata().getGeneration();
  }

  /**
   * Every pod of the operands' and the writers' namespaces by namespace/name: its UID and each
   * container's restarts. A pod replaced or a container restarted changes it.
   */
  private Map<String, String> podsAndRestarts() {
    Map<String, String> pods = new TreeMap<>();
    for (String ns : List.of(DefaultInstall.SYSTEM, APPS)) {
      for (Pod pod : client.pods().inNamespace(ns).list().getItems()) {
        StringBuilder state = new StringBuilder(pod.getMetadata().getUid());
        for (var c : pod.getStatus().getContainerStatuses()) {
          state.append(' ').append(c.getName()).append('=').append(c.getRestartCount());
        }
        pods.put(ns + "/" + pod.getMetadata().getName(), state.toString());
      }
    }
    return pods;
  }

  /** {@code pod} with a node selector for the node of claim {@code source}'s volume. */
  private PodBuilder pinnedBeside(PodBuilder pod, String source) {
    String node = apps.nodesOf(apps.claimNamed(source)).get(0);
    return pod.editSpec().addToNodeSelector("kubernetes.io/hostname", node).endSpec();
  }
}

package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.LogLevel;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.driver.cli.DriverCommand;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.KubeletRegistration;
import dev.soko.driver.config.PoolConfig;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Every argument list the model gives the driver, in the controller Deployment and the node
 * DaemonSet, for every row of the versions table, both registration modes and every pool backend
 * and option the CRD has, goes through the driver's own command-line parser (the one its {@code
 * main} runs) and must parse to the configuration the spec means. A flag or pool field renamed on
 * either side, or a value the driver refuses, fails here instead of crash-looping a DaemonSet.
 */
class DriverArgumentsTest {
  private static final String NODE = "node-7";
  private static final VersionsTable TABLE = VersionsTable.load();

  @Test
  void everyRenderedDriverArgumentListParsesToTheConfigurationTheSpecMeans() {
    List<Consumer<StorageClusterSpec>> variants = variants();
    LogLevel[] levels = LogLevel.values();
    int parsed = 0;
    for (VersionsTable.Row row : TABLE.rows()) {
      for (Registration registration : Registration.values()) {
        for (Consumer<StorageClusterSpec> variant : variants) {
          StorageCluster sc = Fixtures.sample();
          StorageClusterSpec spec = sc.getSpec();
          spec.getDriver().setRegistration(registration);
          spec.getDriver().setLogLevel(levels[parsed / 2 % levels.length]);
          variant.accept(spec);
          spec.setStorageClasses(classesOf(spec));
          assertThat(SpecValidator.problems(spec)).as("a spec the operator applies").isEmpty();
          DesiredState d = Fixtures.desired(sc, "1." + row.minMinor());
          boolean snapshots =
              DesiredState.snapshotsEnabled(
                  spec, ClusterFacts.offline(KubernetesVersion.parse("1." + row.minMinor())));
          PodSpec node = Fixtures.nodePod(d);
          PodSpec controller = Fixtures.controllerPod(d);
          DriverConfig nodeConfig = parse(node);
          assertThat(nodeConfig).isEqualTo(expectedNode(spec, node, snapshots));
          assertThat(nodeConfig.pools())
              .extracting(p -> List.copyOf(p.fsTypes()))
              .as("filesystems in order, the first the default")
              .containsExactlyElementsOf(
                  spec.getPools().stream().map(DriverArgumentsTest::fs).toList());
          assertThat(parse(controller)).isEqualTo(expectedController(spec, controller));
          parsed += 2;
        }
      }
    }
    assertThat(parsed)
        .isEqualTo(TABLE.rows().size() * Registration.values().length * variants.size() * 2);
  }

  /** Spec changes that together use every option the CRD gives the driver's flags. */
  private static List<Consumer<StorageClusterSpec>> variants() {
    return List.of(
        spec -> spec.setPools(List.of(pool("plain", "/var/lib/soko/plain"))),
        spec -> {
          PoolSpec every = pool("every", "/mnt/disks/every");
          every.setBackend(PoolBackend.ImageFile);
          every.setCapacity("1.5Ti");
          every.setOverprovisionRatio(2.5);
          every.setFsTypes(List.of(FsType.xfs, FsType.ext4));
          every.setRequireMountPoint(true);
          every.setAllowRootFilesystem(true);
          every.setNodeSelector(
              new LinkedHashMap<>(
                  Map.of(
                      "soko.dev/disk", "nvme",
                      "node.kubernetes.io/instance-type", "m5.large",
                      "empty", "")));
          spec.setPools(List.of(every));
          spec.getDriver().setMaxVolumesPerNode(40);
          spec.getDriver().setMetricsPort(9810);
        },
        spec -> {
          PoolSpec single = pool("single", "/srv/single");
          single.setFsTypes(List.of(FsType.ext4));
          single.setCapacity("500M");
          single.setOverprovisionRatio(1.0);
          spec.setPools(List.of(single));
          spec.getDriver().setMaxVolumesPerNode(0);
          spec.getNodePlugin().setKubeletDir("/data//kubelet/./");
        },
        spec -> {
          PoolSpec btrfs = pool("fast", "/var/lib/soko/fast");
          btrfs.setBackend(PoolBackend.BtrfsSubvolume);
          btrfs.setCapacity("200Gi");
          btrfs.setRequireMountPoint(true);
          btrfs.setNodeSelector(Map.of("soko.dev/btrfs", "true"));
          spec.setPools(List.of(btrfs));
        },
        spec -> {
          PoolSpec btrfs = pool("named", "/var/lib/soko/named");
          btrfs.setBackend(PoolBackend.BtrfsSubvolume);
          btrfs.setFsTypes(List.of(FsType.btrfs));
          spec.setPools(List.of(btrfs));
          spec.getDriver().setExtraArgs(List.of("--allowed-path-root=/mnt/extra"));
        },
        spec -> {
          PoolSpec image = pool("image", "/var/lib/soko/image");
          image.setFsTypes(List.of(FsType.xfs));
          PoolSpec btrfs = pool("subvolumes", "/var/lib/soko/subvolumes");
          btrfs.setBackend(PoolBackend.BtrfsSubvolume);
          spec.setPools(List.of(image, btrfs, pool("third", "/var/lib/soko/third")));
          spec.getDriver().setName("csi.example.com");
          spec.getDriver()
              .setExtraArgs(List.of("--allowed-path-root=/mnt/a", "--allowed-path-root=/mnt/b"));
        },
        spec -> spec.getDriver().setMetricsPort(19810),
        spec -> spec.getSnapshots().setEnabled(false),
        spec -> spec.getFeatures().setImmediateGrowth(false));
  }

  private static PoolSpec pool(String name, String path) {
    PoolSpec pool = new PoolSpec();
    pool.setName(name);
    pool.setPath(path);
    return pool;
  }

  /** A class per pool, of the pool's first filesystem when it names any, else of its backend's. */
  private static List<StorageClassSpec> classesOf(StorageClusterSpec spec) {
    List<StorageClassSpec> classes = new ArrayList<>();
    for (PoolSpec pool : spec.getPools()) {
      StorageClassSpec sc = new StorageClassSpec();
      sc.setName("soko-" + pool.getName());
      sc.setPool(pool.getName());
      if (pool.getFsTypes() != null && !pool.getFsTypes().isEmpty()) {
        sc.setFsType(pool.getFsTypes().get(0));
      }
      classes.add(sc);
    }
    return classes;
  }

  /** The driver container's args as the kubelet runs them, through the driver's parser. */
  private static DriverConfig parse(PodSpec pod) {
    Container driver = Fixtures.container(pod, Component.DRIVER.key());
    assertThat(driver.getCommand()).as("the image's entry point runs the driver").isNullOrEmpty();
    return DriverCommand.configOf(PodEnvironment.expand(driver, NODE));
  }

  /**
   * The socket a sidecar dials, which must be the driver's: the same file of the same volume in
   * both containers.
   */
  private static String sharedSocket(PodSpec pod, String sidecar) {
    String socket = PodEnvironment.socket(pod, sidecar);
    assertThat(
            PodEnvironment.volumePathOf(
                pod, Fixtures.container(pod, Component.DRIVER.key()), socket))
        .as("the driver's socket is %s's", sidecar)
        .isEqualTo(PodEnvironment.volumePathOf(pod, Fixtures.container(pod, sidecar), socket));
    return socket;
  }

  /**
   * @param snapshots whether the cluster runs csi-snapshotter on the nodes, whose imported contents
   *     the driver then labels
   */
  private static DriverConfig expectedNode(
      StorageClusterSpec spec, PodSpec pod, boolean snapshots) {
    String kubeletDir = PodEnvironment.clean(spec.getNodePlugin().getKubeletDir());
    String driverName = spec.getDriver().getName();
    boolean builtIn = spec.getDriver().getRegistration() == Registration.BuiltIn;
    Container driver = Fixtures.container(pod, Component.DRIVER.key());
    assertThat(PodEnvironment.hostPathOf(pod, driver, kubeletDir + "/plugins"))
        .as("the kubelet's plugins directory, whose filesystem --kubelet-dir names")
        .isEqualTo(kubeletDir + "/plugins");
    String socket = sharedSocket(pod, Component.PROVISIONER.key());
    String socketOnHost = PodEnvironment.hostPathOf(pod, driver, socket);
    Optional<KubeletRegistration> registration = Optional.empty();
    if (builtIn) {
      String registry = PodEnvironment.mountOf(pod, driver, kubeletDir + "/plugins_registry");
      registration =
          Optional.of(
              new KubeletRegistration(
                  Path.of(socketOnHost), Path.of(registry, driverName + "-reg.sock")));
    }
    List<Path> roots = new ArrayList<>(List.of(Path.of(kubeletDir)));
    roots.addAll(extraRoots(spec));
    return new DriverConfig(
            driverName,
            NODE,
            DriverConfig.Mode.NODE,
            "unix://" + socket,
            spec.getPools().stream().map(DriverArgumentsTest::poolConfig).toList(),
            roots,
            spec.getDriver().getMaxVolumesPerNode() == null
                ? 0
                : spec.getDriver().getMaxVolumesPerNode(),
            metricsAddress(spec),
            builtIn ? PodEnvironment.probedAddress(driver) : "",
            registration,
            Optional.of(Path.of(kubeletDir)),
            spec.getDriver().getLogLevel().name(),
            snapshots)
        .withDataPort(PodEnvironment.POD_IP + ":" + DataTls.PORT, Path.of(DataTls.MOUNT_DIR))
        // The flag's default, which the operator leaves: the runtime's NRI socket directory is
        // mounted at the same path (DriverReleaseTest).
        .withNriSocket(Optional.of(Path.of("/var/run/nri/nri.sock")));
  }

  private static DriverConfig expectedController(StorageClusterSpec spec, PodSpec pod) {
    boolean builtIn = spec.getDriver().getRegistration() == Registration.BuiltIn;
    List<Path> roots = extraRoots(spec);
    return new DriverConfig(
            spec.getDriver().getName(),
            NODE,
            DriverConfig.Mode.CONTROLLER,
            "unix://" + sharedSocket(pod, Component.RESIZER.key()),
            List.of(),
            roots.isEmpty() ? List.of(Path.of("/var/lib/kubelet")) : roots,
            0,
            metricsAddress(spec),
            builtIn
                ? PodEnvironment.probedAddress(Fixtures.container(pod, Component.DRIVER.key()))
                : "",
            Optional.empty(),
            Optional.empty(),
            spec.getDriver().getLogLevel().name(),
            false)
        .withDataPort("", Path.of(DataTls.MOUNT_DIR))
        .withImmediateGrowth(
            !Boolean.FALSE.equals(spec.getFeatures().getImmediateGrowth())
                || !DriverRelease.of(Fixtures.container(pod, Component.DRIVER.key()).getImage())
                    .has(DriverRelease.IMMEDIATE_GROWTH_SWITCH));
  }

  private static PoolConfig poolConfig(PoolSpec pool) {
    long capacity =
        pool.getCapacity() == null
            ? 0
            : Quantity.getAmountInBytes(new Quantity(pool.getCapacity()))
                .setScale(0, RoundingMode.CEILING)
                .longValueExact();
    return new PoolConfig(
        pool.getName(),
        Path.of(pool.getPath()),
        capacity,
        pool.getOverprovisionRatio() == null ? 1.0 : pool.getOverprovisionRatio(),
        new LinkedHashSet<>(fs(pool)),
        Boolean.TRUE.equals(pool.getRequireMountPoint()),
        Boolean.TRUE.equals(pool.getAllowRootFilesystem()),
        pool.getNodeSelector() == null ? Map.of() : pool.getNodeSelector(),
        switch (PoolBackends.of(pool)) {
          case ImageFile -> PoolConfig.Backend.IMAGE_FILE;
          case BtrfsSubvolume -> PoolConfig.Backend.BTRFS_SUBVOLUME;
        });
  }

  /** The pool's filesystems, the default first: the spec's, else all its backend makes. */
  private static List<String> fs(PoolSpec pool) {
    return switch (PoolBackends.of(pool)) {
      case BtrfsSubvolume -> List.of("btrfs");
      case ImageFile ->
          pool.getFsTypes() == null || pool.getFsTypes().isEmpty()
              ? List.of("ext4", "xfs")
              : pool.getFsTypes().stream().map(FsType::name).toList();
    };
  }

  private static String metricsAddress(StorageClusterSpec spec) {
    Integer port = spec.getDriver().getMetricsPort();
    return port == null ? "" : "0.0.0.0:" + port;
  }

  private static List<Path> extraRoots(StorageClusterSpec spec) {
    return spec.getDriver().getExtraArgs().stream()
        .map(a -> Path.of(a.substring("--allowed-path-root=".length())))
        .toList();
  }
}

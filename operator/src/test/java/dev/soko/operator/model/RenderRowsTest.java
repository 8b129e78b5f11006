package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The render of every row of the shipped versions table (read from versions.yaml, never copied), in
 * both registration modes, against what the row's sidecar releases need ({@link Upstream}: their
 * sources at the row's tags) and the reference distributed deployment (csi-driver-host-path's
 * deploy/kubernetes-distributed). Every check names its source in its description.
 */
class RenderRowsTest {
  private static final VersionsTable TABLE = VersionsTable.load();

  static Stream<Arguments> rows() {
    List<Arguments> out = new ArrayList<>();
    for (VersionsTable.Row row : TABLE.rows()) {
      for (Registration mode : Registration.values()) {
        out.add(Arguments.of(row.minMinor(), mode));
      }
    }
    return out.stream();
  }

  /** The sample StorageCluster rendered for 1.minMinor, the row's own version. */
  static DesiredState render(int minor, Registration mode) {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setRegistration(mode);
    DesiredState d = Fixtures.desired(sc, "1." + minor);
    assertThat(TABLE.rowFor(KubernetesVersion.parse("1." + minor)).minMinor())
        .as("the row rendered")
        .isEqualTo(minor);
    return d;
  }

  /**
   * The sample StorageCluster rendered for 1.minMinor on a cluster that serves the row's APIs and
   * the snapshot API, and the v1 group snapshot API when {@code groupApi}.
   */
  static DesiredState render(int minor, Registration mode, boolean groupApi) {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setRegistration(mode);
    Set<String> served = new TreeSet<>(row(minor).requiredApis());
    served.add(ClusterFacts.VOLUME_SNAPSHOT_CLASSES);
    if (groupApi) {
      served.addAll(ClusterFacts.GROUP_SNAPSHOT_APIS);
    }
    return DesiredState.of(
        sc,
        TABLE,
        new ClusterFacts(
            KubernetesVersion.parse("1." + minor), served, true, null, null, null, null));
  }

  static VersionsTable.Row row(int minor) {
    return TABLE.rowFor(KubernetesVersion.parse("1." + minor));
  }

  static Upstream.Release release(int minor, Component c) {
    return Upstream.release(row(minor).images().get(c.key()));
  }

  /** --name=value → name → value ("" for a bare --name); -v=5 style too. */
  static Map<String, String> flags(Container c) {
    Map<String, String> out = new TreeMap<>();
    for (String arg : c.getArgs()) {
      String a = arg.replaceFirst("^--?", "");
      int eq = a.indexOf('=');
      out.put(eq < 0 ? a : a.substring(0, eq), eq < 0 ? "" : a.substring(eq + 1));
    }
    return out;
  }

  /** The gates a container runs with: the release's defaults, then its --feature-gates. */
  private static Map<String, Boolean> effectiveGates(Container c, Upstream.Release r) {
    Map<String, Boolean> gates = new TreeMap<>(r.gates() == null ? Map.of() : r.gates());
    String set = flags(c).get("feature-gates");
    if (set != null) {
      for (String kv : set.split(",")) {
        String[] p = kv.split("=");
        gates.put(p[0], Boolean.valueOf(p[1]));
      }
    }
    return gates;
  }

  private static Set<String> setGates(Container c) {
    String set = flags(c).get("feature-gates");
    Set<String> out = new TreeSet<>();
    if (set != null) {
      for (String kv : set.split(",")) {
        out.add(kv.substring(0, kv.indexOf('=')));
      }
    }
    return out;
  }

  private static Map<String, String> env(Container c) {
    Map<String, String> out = new HashMap<>();
    for (EnvVar e : c.getEnv()) {
      out.put(e.getName(), e.getValueFrom().getFieldRef().getFieldPath());
    }
    return out;
  }

  static Container container(PodSpec pod, Component c) {
    return Fixtures.container(pod, c.key());
  }

  /** Every sidecar the pods run takes only flags its release defines and gates it knows. */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("rows")
  void everySidecarGetsOnlyFlagsAndGatesItsReleaseDefines(int minor, Registration mode) {
    DesiredState d = render(minor, mode);
    List<Container> sidecars = new ArrayList<>();
    sidecars.addAll(Fixtures.nodePod(d).getContainers());
    sidecars.addAll(Fixtures.controllerPod(d).getContainers());
    sidecars.removeIf(c -> c.getName().equals(Component.DRIVER.key()));
    assertThat(sidecars).isNotEmpty();
    for (Container c : sidecars) {
      // The group snapshotter is the row's csi-snapshotter under a name of its own.
      String key =
          c.getName().equals(ControllerDeployment.GROUP_SNAPSHOTTER)
              ? Component.SNAPSHOTTER.key()
              : c.getName();
      Component component =
          Stream.of(Component.values()).filter(x -> x.key().equals(key)).findFirst().orElseThrow();
      Upstream.Release r = release(minor, component);
      assertThat(c.getImage()).isEqualTo(r.image());
      assertThat(r.flags())
          .as("flags of %s are defined in %s", r.image(), r.flagsSource())
          .containsAll(flags(c).keySet());
      if (r.gates() == null) {
        assertThat(flags(c))
            .as("%s: %s", r.image(), r.gatesSource())
            .doesNotContainKey("feature-gates");
      } else {
        assertThat(r.gates().keySet())
            .as(
                "gates of %s are known in %s (an unknown gate is fatal)",
                r.image(), r.gatesSource())
            .containsAll(setGates(c));
      }
    }
  }

  /**
   * The provisioner on every node: Topology on (else no node affinity on the PV), distributed
   * provisioning and capacity as the provisioner's README and the reference deployment have them.
   */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("rows")
  void theNodesProvisionerRunsWithTopologyAndDistributedProvisioning(int minor, Registration mode) {
    DesiredState d = render(minor, mode);
    Upstream.Release r = release(minor, Component.PROVISIONER);
    Upstream.HostPath ref = Upstream.hostPath(row(minor).images().get("liveness-probe"));
    String plugin = ref.source("csi-hostpath-plugin.yaml");
    Container p = container(Fixtures.nodePod(d), Component.PROVISIONER);
    Map<String, String> f = flags(p);

    assertThat(effectiveGates(p, r))
        .as(
            "Topology on: default per %s, else --feature-gates=Topology=true as %s passes;"
                + " pkg/controller/topology.go SupportsTopology needs it for node affinity",
            r.gatesSource(), plugin)
        .containsEntry("Topology", true);
    assertThat(f)
        .as("%s; external-provisioner README 'Deployment on each node' @%s", plugin, r.image())
        .containsEntry("node-deployment", "true")
        .containsEntry("strict-topology", "true")
        .containsEntry("immediate-topology", "false")
        .containsEntry("csi-address", "/csi/csi.sock")
        .doesNotContainKey("leader-election");
    assertThat(env(p))
        .as("NODE_NAME for --node-deployment; NAMESPACE and POD_NAME for capacity (%s)", plugin)
        .containsEntry("NODE_NAME", "spec.nodeName")
        .containsEntry("NAMESPACE", "metadata.namespace")
        .containsEntry("POD_NAME", "metadata.name");
    assertThat(f)
        .as(
            "--enable-capacity as %s; --capacity-ownerref-level=1 (the DaemonSet owns the node's"
                + " CSIStorageCapacity: external-provisioner README 'Capacity support', distributed"
                + " provisioning, @%s) where the reference uses 0 (the pod)",
            plugin, r.image())
        .containsEntry("enable-capacity", "true")
        .containsEntry("capacity-ownerref-level", "1");
    assertThat(f)
        .as("the PVC's name and namespace for the driver's logs (flag in %s)", r.flagsSource())
        .containsEntry("extra-create-metadata", "true");
    assertThat(f)
        .as(
            "the API rate above client-go's 5/s, burst 10, that paced 300 claims at 3.5/s (flags in"
                + " %s)",
            r.flagsSource())
        .containsEntry("kube-api-qps", "50")
        .containsEntry("kube-api-burst", "100");
  }

  /**
   * The snapshotter on every node: distributed snapshotting, no leader election, no group snapshots
   * (the driver has no group controller service and the RBAC grants no group API).
   */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("rows")
  void theNodesSnapshotterRunsDistributedWithoutGroupSnapshots(int minor, Registration mode) {
    DesiredState d = render(minor, mode);
    Upstream.Release r = release(minor, Component.SNAPSHOTTER);
    Container s = container(Fixtures.nodePod(d), Component.SNAPSHOTTER);
    String readme = "external-snapshotter README 'Distributed Snapshotting' @" + r.image();
    assertThat(flags(s)).as(readme).containsEntry("node-deployment", "true");
    assertThat(env(s)).as(readme).containsEntry("NODE_NAME", "spec.nodeName");
    assertThat(flags(s))
        .as("node-deployment with leader election exits (cmd/csi-snapshotter/main.go @v8.7.0)")
        .doesNotContainKey("leader-election");
    if (r.gates() == null) {
      assertThat(flags(s))
          .as(
              "group snapshots off: --enable-volume-group-snapshots defaults to false (%s)",
              r.flagsSource())
          .doesNotContainKey("enable-volume-group-snapshots");
    } else {
      assertThat(effectiveGates(s, r))
          .as(
              "group snapshots off (default per %s; README 'Volume Group Snapshot Support' @v8.7.0"
                  + " says --feature-gates=CSIVolumeGroupSnapshot=false)",
              r.gatesSource())
          .containsEntry("CSIVolumeGroupSnapshot", false);
    }
  }

  /**
   * Group snapshots where the row's snapshotter serves the v1 group API and the cluster serves it:
   * one more csi-snapshotter in the controller pod, distributed (--node-deployment with a fixed
   * NODE_NAME: v8.7.0 reads group contents and classes through managed-by=NODE_NAME), without
   * leader election (exits with --node-deployment), with the group gate on; the nodes' snapshotters
   * keep it off. Elsewhere no group snapshotter and the release's default stays on the nodes.
   */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("rows")
  void theControllersGroupSnapshotterRunsOnlyWhereItsReleaseAndTheClusterServeGroups(
      int minor, Registration mode) {
    Upstream.Release r = release(minor, Component.SNAPSHOTTER);
    String main = "cmd/csi-snapshotter/main.go @" + r.image();
    for (boolean groupApi : new boolean[] {true, false}) {
      DesiredState d = render(minor, mode, groupApi);
      PodSpec ctrl = Fixtures.controllerPod(d);
      boolean groups = groupApi && row(minor).groupSnapshots();
      assertThat(ctrl.getContainers().stream().map(Container::getName))
          .as("a group snapshotter with group snapshots on only")
          .filteredOn(ControllerDeployment.GROUP_SNAPSHOTTER::equals)
          .hasSize(groups ? 1 : 0);
      assertThat(d.groupSnapshotClass() != null)
          .as("a VolumeGroupSnapshotClass with group snapshots on only")
          .isEqualTo(groups);
      Container node = container(Fixtures.nodePod(d), Component.SNAPSHOTTER);
      if (r.gates() != null) {
        assertThat(effectiveGates(node, r))
            .as("the nodes' snapshotters take no groups (README 'Volume Group Snapshot Support')")
            .containsEntry(VersionsTable.GROUP_SNAPSHOT_GATE, false);
      } else {
        assertThat(flags(node)).doesNotContainKey("enable-volume-group-snapshots");
      }
      if (!groups) {
        continue;
      }
      Container g = Fixtures.container(ctrl, ControllerDeployment.GROUP_SNAPSHOTTER);
      assertThat(g.getImage()).isEqualTo(r.image());
      assertThat(flags(g))
          .as("%s: --node-deployment, the controller's socket; no leader election", main)
          .containsEntry("node-deployment", "true")
          .containsEntry("csi-address", "/csi/csi.sock")
          .containsEntry("timeout", "60s")
          .doesNotContainKey("leader-election")
          .doesNotContainKey("http-endpoint");
      assertThat(effectiveGates(g, r))
          .as("group snapshots on (gate known in %s)", r.gatesSource())
          .containsEntry(VersionsTable.GROUP_SNAPSHOT_GATE, true);
      assertThat(g.getEnv())
          .extracting(EnvVar::getName, EnvVar::getValue)
          .as("NODE_NAME for --node-deployment (%s): the fixed identity", main)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(
                  "NODE_NAME", ControllerDeployment.GROUP_SNAPSHOTTER_IDENTITY));
      assertThat(d.groupSnapshotClass().getMetadata().getLabels())
          .as("the group class is read through managed-by=NODE_NAME (%s)", main)
          .containsEntry(
              "snapshot.storage.kubernetes.io/managed-by",
              ControllerDeployment.GROUP_SNAPSHOTTER_IDENTITY);
    }
  }

  /** The node pod's volumes and the driver container as the reference distributed deployment. */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("rows")
  void theNodePodMountsWhatTheReferenceDeploymentMounts(int minor, Registration mode) {
    DesiredState d = render(minor, mode);
    Upstream.HostPath ref = Upstream.hostPath(row(minor).images().get("liveness-probe"));
    String plugin = ref.source("csi-hostpath-plugin.yaml");
    PodSpec pod = Fixtures.nodePod(d);
    Map<String, String> hostPaths = new TreeMap<>();
    for (Volume v : pod.getVolumes()) {
      if (v.getHostPath() != null) {
        hostPaths.put(v.getName(), v.getHostPath().getPath() + " " + v.getHostPath().getType());
      }
    }
    assertThat(hostPaths)
        .as("volumes of %s (plugin directory named after the driver)", plugin)
        .containsEntry("socket-dir", "/var/lib/kubelet/plugins/fast.csi.soko.dev DirectoryOrCreate")
        .containsEntry("mountpoint-dir", "/var/lib/kubelet/pods DirectoryOrCreate")
        .containsEntry("registration-dir", "/var/lib/kubelet/plugins_registry Directory")
        .containsEntry("plugins-dir", "/var/lib/kubelet/plugins Directory")
        .containsEntry("dev-dir", "/dev Directory");
    Container driver = container(pod, Component.DRIVER);
    assertThat(driver.getSecurityContext().getPrivileged()).as(plugin).isTrue();
    Map<String, String> mounts = new TreeMap<>();
    for (VolumeMount m : driver.getVolumeMounts()) {
      mounts.put(m.getMountPath(), m.getName() + " " + m.getMountPropagation());
    }
    assertThat(mounts)
        .as("driver mounts of %s", plugin)
        .containsEntry("/csi", "socket-dir null")
        .containsEntry("/var/lib/kubelet/pods", "mountpoint-dir Bidirectional")
        .containsEntry("/var/lib/kubelet/plugins", "plugins-dir Bidirectional")
        .containsEntry("/dev", "dev-dir null");
    Probe probe = driver.getLivenessProbe();
    assertThat(probe.getHttpGet().getPath()).as(plugin).isEqualTo("/healthz");
    assertThat(probe.getHttpGet().getPort().getStrVal()).as(plugin).isEqualTo("healthz");
    assertThat(
            List.of(
                probe.getFailureThreshold(),
                probe.getInitialDelaySeconds(),
                probe.getTimeoutSeconds()))
        .as(
            "failureThreshold, initialDelaySeconds, timeoutSeconds of %s (periodSeconds: 10, not 2:"
                + " a deliberate difference, fewer Probe calls)",
            plugin)
        .containsExactly(5, 10, 3);
  }

  /**
   * Every container that can serve a health endpoint has a liveness probe on it, in either
   * registration mode; ports of a pod never clash and every probed port is a declared one.
   */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("rows")
  void everyHealthEndpointIsProbedAndNoPortsClash(int minor, Registration mode) {
    DesiredState d = render(minor, mode);
    Upstream.HostPath ref = Upstream.hostPath(row(minor).images().get("liveness-probe"));
    PodSpec node = Fixtures.nodePod(d);
    PodSpec ctrl = Fixtures.controllerPod(d);
    for (PodSpec pod : List.of(node, ctrl)) {
      List<Integer> ports =
          pod.getContainers().stream()
              .flatMap(c -> c.getPorts().stream())
              .map(ContainerPort::getContainerPort)
              .toList();
      assertThat(ports).as("container ports of one pod").doesNotHaveDuplicates();
      for (Container c : pod.getContainers()) {
        for (String endpoint : List.of("http-endpoint", "health-address", "metrics-address")) {
          String addr = flags(c).get(endpoint);
          if (addr != null) {
            int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
            assertThat(ports)
                .as(
                    "%s --%s port declared in the pod (the driver's health port is declared on"
                        + " the driver container also when the livenessprobe sidecar serves it, as"
                        + " in %s)",
                    c.getName(), endpoint, ref.source("csi-hostpath-plugin.yaml"))
                .contains(port);
          }
        }
        if (c.getLivenessProbe() != null) {
          // A named probe port resolves against the container's own ports only.
          assertThat(c.getPorts())
              .as("%s probes a port it declares", c.getName())
              .extracting(ContainerPort::getName)
              .contains(c.getLivenessProbe().getHttpGet().getPort().getStrVal());
        }
      }
    }
    // The driver: its own /healthz (BuiltIn) or the livenessprobe sidecar's, on the same port.
    assertThat(container(node, Component.DRIVER).getLivenessProbe()).isNotNull();
    assertThat(container(ctrl, Component.DRIVER).getLivenessProbe()).isNotNull();
    if (mode == Registration.Sidecars) {
      Container lp = container(node, Component.LIVENESS_PROBE);
      assertThat(flags(lp))
          .as(
              "serves the driver's health port (%s; --http-endpoint, not the deprecated"
                  + " --health-port: %s)",
              ref.source("csi-hostpath-plugin.yaml"),
              release(minor, Component.LIVENESS_PROBE).flagsSource())
          .containsEntry("http-endpoint", ":9808")
          .containsEntry("csi-address", "/csi/csi.sock");
      Container reg = container(node, Component.REGISTRAR);
      Upstream.Release r = release(minor, Component.REGISTRAR);
      assertThat(flags(reg))
          .as(
              "%s; --http-endpoint is defined in %s%s",
              ref.source("csi-hostpath-plugin.yaml"),
              r.flagsSource(),
              ref.registrarHealth() ? " and the reference serves it" : "")
          .containsEntry("csi-address", "/csi/csi.sock")
          .containsEntry(
              "kubelet-registration-path", "/var/lib/kubelet/plugins/fast.csi.soko.dev/csi.sock")
          .containsEntry("http-endpoint", ":9809");
      assertThat(reg.getLivenessProbe().getHttpGet().getPath())
          .as("node-driver-registrar README 'Example' @%s", r.image())
          .isEqualTo("/healthz");
      assertThat(reg.getVolumeMounts())
          .extracting(VolumeMount::getMountPath)
          .as(ref.source("csi-hostpath-plugin.yaml"))
          .contains("/csi", "/registration");
    } else {
      assertThat(node.getContainers())
          .extracting(Container::getName)
          .as("BuiltIn: the driver registers and serves /healthz itself")
          .doesNotContain(Component.REGISTRAR.key(), Component.LIVENESS_PROBE.key());
    }
    Container resizer = container(ctrl, Component.RESIZER);
    String deployment =
        "kubernetes-csi/external-resizer deploy/kubernetes/deployment.yaml @"
            + row(minor).images().get("csi-resizer").replaceFirst(".*:", "");
    assertThat(flags(resizer))
        .as("leader election and its health check on --http-endpoint (%s)", deployment)
        .containsEntry("leader-election", "true")
        .containsKey("http-endpoint");
    Probe probe = resizer.getLivenessProbe();
    assertThat(probe.getHttpGet().getPath()).as(deployment).isEqualTo("/healthz/leader-election");
    assertThat(
            List.of(
                probe.getFailureThreshold(),
                probe.getInitialDelaySeconds(),
                probe.getTimeoutSeconds(),
                probe.getPeriodSeconds()))
        .as(deployment)
        .containsExactly(1, 10, 10, 20);
  }

  /** CSIDriver and StorageClasses as the reference deployment's driver info and classes. */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("rows")
  void csiDriverAndStorageClassesAreTheReferenceOnes(int minor, Registration mode) {
    DesiredState d = render(minor, mode);
    Upstream.HostPath ref = Upstream.hostPath(row(minor).images().get("liveness-probe"));
    CSIDriver driver = d.csiDriver();
    String info = ref.source("csi-hostpath-driverinfo.yaml");
    assertThat(driver.getSpec().getAttachRequired()).as(info).isFalse();
    assertThat(driver.getSpec().getPodInfoOnMount()).as(info).isTrue();
    assertThat(driver.getSpec().getStorageCapacity()).as(info + " (capacity tracking on)").isTrue();
    assertThat(driver.getSpec().getFsGroupPolicy()).as(info).isEqualTo("File");
    assertThat(driver.getSpec().getVolumeLifecycleModes())
        .as(info + ", without Ephemeral: the driver serves no inline volumes (deliberate)")
        .containsExactly("Persistent");
    for (StorageClass sc : d.storageClasses()) {
      String file = ref.source("csi-hostpath-storageclass-fast.yaml");
      assertThat(sc.getProvisioner()).as(file).isEqualTo(driver.getMetadata().getName());
      assertThat(sc.getVolumeBindingMode()).as(file).isEqualTo("WaitForFirstConsumer");
    }
  }
}

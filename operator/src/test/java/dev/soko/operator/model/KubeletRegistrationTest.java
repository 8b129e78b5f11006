package dev.soko.operator.model;

import static dev.soko.operator.model.Fixtures.container;
import static dev.soko.operator.model.Fixtures.controllerPod;
import static dev.soko.operator.model.Fixtures.desired;
import static dev.soko.operator.model.Fixtures.nodePod;
import static dev.soko.operator.model.Fixtures.sidecars;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.VolumeMount;
import org.junit.jupiter.api.Test;

/**
 * spec.driver.registration in the rendered pods: BuiltIn (the default, the driver registers with
 * the kubelet and serves /healthz itself) and Sidecars (node-driver-registrar and livenessprobe).
 */
class KubeletRegistrationTest {
  @Test
  void builtInRegistrationIsTheDefaultAndTheNodeDriverRegistersAndServesHealthItself() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getNodePlugin().setKubeletDir("/data/kubelet/");
    DesiredState d = desired(sc, "1.34");
    assertThat(Fixtures.sample().getSpec().getDriver().getRegistration())
        .isEqualTo(Registration.BuiltIn);
    assertThat(d.registration()).isEqualTo(Registration.BuiltIn);
    PodSpec pod = nodePod(d);
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .doesNotContain("node-driver-registrar", "liveness-probe");
    Container driver = container(pod, "soko-driver");
    assertThat(driver.getArgs())
        .containsSubsequence(
            "--allowed-path-root=/data/kubelet",
            "--kubelet-registration-path=/data/kubelet/plugins/fast.csi.soko.dev/csi.sock",
            "--registration-dir=/registration",
            "--health-address=0.0.0.0:9808");
    assertThat(driver.getVolumeMounts())
        .filteredOn(m -> m.getName().equals("registration-dir"))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getMountPath()).isEqualTo("/registration");
              assertThat(m.getMountPropagation()).isNull();
            });
    assertThat(pod.getVolumes())
        .filteredOn(v -> v.getName().equals("registration-dir"))
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.getHostPath().getPath()).isEqualTo("/data/kubelet/plugins_registry");
              assertThat(v.getHostPath().getType()).isEqualTo("Directory");
            });
    assertThat(driver.getPorts())
        .as("the health port, beside the data path's own")
        .filteredOn(p -> !p.getName().equals(DataTls.PORT_NAME))
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getName()).isEqualTo("healthz");
              assertThat(p.getContainerPort()).isEqualTo(9808);
            });
    assertThat(driver.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(driver.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("healthz");
    assertThat(driver.getReadinessProbe().getHttpGet().getPath())
        .as("ready only once the kubelet registered the driver: a rollout waits for it per node")
        .isEqualTo("/readyz");
    assertThat(driver.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("healthz");
  }

  @Test
  void theKubeletDirectoryIsWrittenInTheCanonicalFormTheKubeletAndDriverExpect() {
    assertThat(NodeDaemonSet.canonicalDir("/data//kubelet/./")).isEqualTo("/data/kubelet");
    assertThat(NodeDaemonSet.canonicalDir("/var/lib/kubelet")).isEqualTo("/var/lib/kubelet");
    assertThat(NodeDaemonSet.canonicalDir(null)).isEqualTo("/var/lib/kubelet");
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getNodePlugin().setKubeletDir("/data//kubelet/");
    assertThat(container(nodePod(desired(sc, "1.34")), "soko-driver").getArgs())
        .contains("--kubelet-registration-path=/data/kubelet/plugins/fast.csi.soko.dev/csi.sock");
  }

  @Test
  void builtInRegistrationGivesTheControllerDriverItsHealthAddressAndNoLivenessProbeSidecar() {
    PodSpec pod = controllerPod(desired(Fixtures.sample(), "1.34"));
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .containsExactly(
            "soko-driver", "csi-resizer", "csi-group-snapshotter", "csi-snapshot-metadata");
    Container driver = container(pod, "soko-driver");
    assertThat(driver.getArgs())
        .contains("--health-address=0.0.0.0:9808")
        .noneMatch(
            a -> a.startsWith("--kubelet-registration-path") || a.startsWith("--registration-dir"));
    assertThat(driver.getPorts()).extracting("name").containsExactly("healthz");
    assertThat(driver.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("healthz");
  }

  @Test
  void builtInRegistrationNeitherResolvesNorReportsTheRegistrarAndLivenessProbeImages() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getImages().getOverrides().setRegistrar("registry.example/my/registrar:v1");
    DesiredState d = desired(sc, "1.34");
    assertThat(d.images().get(Component.REGISTRAR)).isNull();
    assertThat(d.images().get(Component.LIVENESS_PROBE)).isNull();
    assertThat(d.images().byContainerName())
        .doesNotContainKeys("node-driver-registrar", "liveness-probe")
        .containsKeys("soko-driver", "csi-provisioner", "csi-resizer");
    assertThat(d.notices()).contains(DesiredState.REGISTRATION_OVERRIDES_UNUSED);
    assertThat(desired(Fixtures.sample(), "1.34").notices())
        .doesNotContain(DesiredState.REGISTRATION_OVERRIDES_UNUSED);
  }

  @Test
  void sidecarRegistrationRunsTheRegistrarWithItsOwnLivenessProbeAndTheLivenessProbeSidecar() {
    DesiredState d = desired(sidecars(), "1.34");
    assertThat(d.registration()).isEqualTo(Registration.Sidecars);
    PodSpec pod = nodePod(d);
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .containsExactly(
            "soko-driver",
            "csi-provisioner",
            "csi-snapshotter",
            "node-driver-registrar",
            "liveness-probe");
    Container registrar = container(pod, "node-driver-registrar");
    assertThat(registrar.getImage()).isEqualTo("sig-storage/csi-node-driver-registrar:v2.17.0");
    assertThat(registrar.getArgs())
        .containsExactly(
            "--csi-address=/csi/csi.sock",
            "--kubelet-registration-path=/var/lib/kubelet/plugins/fast.csi.soko.dev/csi.sock",
            "--http-endpoint=:9809",
            "--v=2");
    assertThat(registrar.getVolumeMounts())
        .extracting(VolumeMount::getName, VolumeMount::getMountPath)
        .containsExactly(tuple("socket-dir", "/csi"), tuple("registration-dir", "/registration"));
    assertThat(registrar.getPorts())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getName()).isEqualTo("reg-healthz");
              assertThat(p.getContainerPort()).isEqualTo(9809);
            });
    assertThat(registrar.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(registrar.getLivenessProbe().getHttpGet().getPort().getStrVal())
        .isEqualTo("reg-healthz");
    assertThat(container(pod, "liveness-probe").getArgs())
        .containsExactly("--csi-address=/csi/csi.sock", "--http-endpoint=:9808");
    assertThat(container(pod, "liveness-probe").getImage())
        .isEqualTo("sig-storage/livenessprobe:v2.19.0");

    Container driver = container(pod, "soko-driver");
    assertThat(driver.getArgs())
        .noneMatch(
            a ->
                a.startsWith("--kubelet-registration-path")
                    || a.startsWith("--registration-dir")
                    || a.startsWith("--health-address"));
    assertThat(driver.getVolumeMounts())
        .extracting(VolumeMount::getName)
        .doesNotContain("registration-dir");
    // The liveness-probe sidecar serves the driver's health port.
    assertThat(driver.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("healthz");
    assertThat(driver.getReadinessProbe())
        .as("the liveness-probe sidecar serves no /readyz")
        .isNull();
    assertThat(d.images().get(Component.REGISTRAR)).isEqualTo(registrar.getImage());
  }

  @Test
  void sidecarRegistrationRunsTheLivenessProbeBesideTheControllerDriver() {
    PodSpec pod = controllerPod(desired(sidecars(), "1.34"));
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .containsExactly(
            "soko-driver",
            "csi-resizer",
            "csi-group-snapshotter",
            "liveness-probe",
            "csi-snapshot-metadata");
    assertThat(container(pod, "soko-driver").getArgs())
        .noneMatch(a -> a.startsWith("--health-address"));
    assertThat(container(pod, "liveness-probe").getArgs()).contains("--http-endpoint=:9808");
  }

  @Test
  void sidecarRegistrationUsesEachRowsRegistrarAndOverrides() {
    StorageCluster sc = sidecars();
    assertThat(container(nodePod(desired(sc, "1.29")), "node-driver-registrar").getImage())
        .isEqualTo("sig-storage/csi-node-driver-registrar:v2.10.1");
    assertThat(container(nodePod(desired(sc, "1.32")), "node-driver-registrar").getArgs())
        .contains("--http-endpoint=:9809");
    sc.getSpec().getImages().getOverrides().setLivenessProbe("registry.example/my/probe:v9");
    DesiredState d = desired(sc, "1.34");
    assertThat(container(controllerPod(d), "liveness-probe").getImage())
        .isEqualTo("registry.example/my/probe:v9");
    assertThat(d.notices()).doesNotContain(DesiredState.REGISTRATION_OVERRIDES_UNUSED);
  }

  @Test
  void sidecarRegistrationRefusesTheRegistrarsHealthPortAsMetricsPort() {
    StorageCluster sc = sidecars();
    sc.getSpec().getDriver().setMetricsPort(9809);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "with driver.registration Sidecars, driver.metricsPort must not be 9809, the health"
                + " port of node-driver-registrar");
    sc.getSpec().getDriver().setRegistration(Registration.BuiltIn);
    assertThat(SpecValidator.problems(sc.getSpec())).isEmpty();
  }
}

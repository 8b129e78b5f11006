package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The data path in the pods: the node plugin's driver serves the data port on its pod IP with the
 * node's certificate, the controller's driver calls nodes with its own; each mounts only its own
 * Secret, read-only, and no pod mounts the CA's.
 */
class DataTlsRenderTest {
  private static final VersionsTable TABLE = VersionsTable.load();

  @Test
  void theNodeDriverServesTheDataPortOnItsPodIpWithTheNodesCertificate() {
    PodSpec pod = nodePod(Fixtures.sample(), true);
    Container driver = Fixtures.container(pod, Component.DRIVER.key());
    assertThat(driver.getArgs())
        .contains("--data-address=$(POD_IP):9813", "--data-tls-dir=/etc/soko/data-tls");
    EnvVar podIp =
        driver.getEnv().stream()
            .filter(e -> e.getName().equals("POD_IP"))
            .findFirst()
            .orElseThrow();
    assertThat(podIp.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");
    assertThat(driver.getPorts())
        .filteredOn(p -> "data".equals(p.getName()))
        .extracting(ContainerPort::getContainerPort, ContainerPort::getProtocol)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(9813, "TCP"));
    assertThat(PodEnvironment.expand(driver, "node-1"))
        .as("the address the driver binds once the kubelet expands it")
        .doesNotContain("--data-address=$(POD_IP):9813");
    assertMountsOwnSecret(pod, driver, "fast-node-data-tls");
  }

  @Test
  void theControllerDriverGetsItsCertificateAndNoDataPort() {
    PodSpec pod = controllerPod(Fixtures.sample(), true);
    Container driver = Fixtures.container(pod, Component.DRIVER.key());
    assertThat(driver.getArgs())
        .contains("--data-tls-dir=/etc/soko/data-tls")
        .noneMatch(a -> a.startsWith("--data-address"));
    assertThat(driver.getPorts()).extracting(ContainerPort::getName).doesNotContain("data");
    assertThat(driver.getEnv())
        .as("the relay finds a snapshot's StorageNode by the StorageCluster's name")
        .anyMatch(e -> e.getName().equals("SOKO_STORAGE_CLUSTER") && "fast".equals(e.getValue()));
    assertMountsOwnSecret(pod, driver, "fast-controller-data-tls");
  }

  @Test
  void theAdminsExtraArgsStayLast() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setExtraArgs(List.of("--allowed-path-root=/mnt/x"));
    for (PodSpec pod : List.of(nodePod(sc, true), controllerPod(sc, true))) {
      List<String> args = Fixtures.container(pod, Component.DRIVER.key()).getArgs();
      assertThat(args.get(args.size() - 1)).isEqualTo("--allowed-path-root=/mnt/x");
    }
  }

  @Test
  void withoutTheDataPathThePodsAreAsBefore() {
    PodSpec node = nodePod(Fixtures.sample(), false);
    PodSpec controller = controllerPod(Fixtures.sample(), false);
    for (PodSpec pod : List.of(node, controller)) {
      Container driver = Fixtures.container(pod, Component.DRIVER.key());
      assertThat(driver.getArgs()).noneMatch(a -> a.startsWith("--data-"));
      assertThat(pod.getVolumes()).extracting(Volume::getName).doesNotContain(DataTls.VOLUME);
      assertThat(driver.getEnv()).extracting(EnvVar::getName).doesNotContain("POD_IP");
    }
  }

  /** What DesiredState renders follows the driver's release: a 0.1.0 driver has no such flags. */
  @Test
  void theDesiredStateRendersTheDataPathExactlyWhenTheDriverReleaseHasIt() {
    StorageCluster sc = Fixtures.sample();
    DesiredState d = Fixtures.desired(sc, "1.34");
    boolean rendered =
        Fixtures.container(Fixtures.nodePod(d), Component.DRIVER.key()).getArgs().stream()
            .anyMatch(a -> a.startsWith("--data-tls-dir="));
    assertThat(rendered).isTrue();
    sc.getSpec().getDriver().setImage("soko.local/soko-driver:0.1.0");
    assertThat(DataTls.rendered(Fixtures.desired(sc, "1.34").images())).isFalse();
  }

  @Test
  void theValidatorRefusesTheDataPortAsMetricsPort() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setMetricsPort(DataTls.PORT);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .contains("driver.metricsPort must not be 9813, the node plugin's data port");
  }

  private static void assertMountsOwnSecret(PodSpec pod, Container driver, String secret) {
    VolumeMount mount =
        driver.getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals("/etc/soko/data-tls"))
            .findFirst()
            .orElseThrow();
    assertThat(mount.getReadOnly()).isTrue();
    Volume volume =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals(mount.getName()))
            .findFirst()
            .orElseThrow();
    assertThat(volume.getSecret().getSecretName()).isEqualTo(secret);
    assertThat(pod.getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .extracting(v -> v.getSecret().getSecretName())
        .as("no pod mounts the CA")
        .containsExactly(secret);
    for (Container other : pod.getContainers()) {
      if (other != driver) {
        assertThat(other.getVolumeMounts())
            .extracting(VolumeMount::getName)
            .as(other.getName())
            .doesNotContain(mount.getName());
      }
    }
  }

  private static PodSpec nodePod(StorageCluster sc, boolean dataPath) {
    KubernetesVersion v = KubernetesVersion.parse("1.34");
    ResolvedImages images = ResolvedImages.resolve(sc.getSpec(), TABLE, v);
    return NodeDaemonSet.build(Names.of(sc), sc.getSpec(), images, TABLE.rowFor(v), true, dataPath)
        .getSpec()
        .getTemplate()
        .getSpec();
  }

  private static PodSpec controllerPod(StorageCluster sc, boolean dataPath) {
    KubernetesVersion v = KubernetesVersion.parse("1.34");
    ResolvedImages images = ResolvedImages.resolve(sc.getSpec(), TABLE, v);
    return ControllerDeployment.build(
            Names.of(sc), sc.getSpec(), images, TABLE.rowFor(v), false, true, dataPath, false)
        .getSpec()
        .getTemplate()
        .getSpec();
  }
}

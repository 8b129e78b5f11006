package dev.soko.operator.model;

import static dev.soko.operator.model.Fixtures.container;
import static dev.soko.operator.model.Fixtures.controllerPod;
import static dev.soko.operator.model.Fixtures.desired;
import static dev.soko.operator.model.Fixtures.nodePod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The templates follow the driver's release: an operator upgraded alone, its driver pinned to an
 * older release, renders what that release's templates held and so rolls no pod (UpgradeE2E runs it
 * on real nodes).
 */
class DriverReleaseTest {
  @ParameterizedTest
  @CsvSource({
    "soko.local/soko-driver:0.1.0, 0.1.0",
    "soko.local/soko-driver:v0.1.0, 0.1.0",
    "soko.local/soko-driver:0.2.0-SNAPSHOT, 0.2.0",
    "registry:5000/soko-driver:1.12.3+build.7, 1.12.3",
    "soko.local/soko-driver:0.1.0@sha256:0123, 0.1.0",
  })
  void theReleaseIsTheImageTagsVersion(String image, String release) {
    DriverRelease r = DriverRelease.of(image);
    assertThat(r.major() + "." + r.minor() + "." + r.patch()).isEqualTo(release);
  }

  @ParameterizedTest
  @CsvSource({
    "soko.local/soko-driver",
    "soko.local/soko-driver:latest",
    "registry:5000/soko-driver",
    "soko.local/soko-driver@sha256:0123",
    "soko.local/soko-driver:0.1",
    "soko.local/soko-driver:99999999999.0.0",
  })
  void anImageWithoutAVersionTagIsTakenToBeTheOperatorsOwnRelease(String image) {
    assertThat(DriverRelease.of(image)).isEqualTo(DriverRelease.UNVERSIONED);
    assertThat(DriverRelease.of(image).has(DriverRelease.NODE_REQUESTS)).isTrue();
  }

  @Test
  void aPreReleaseHasWhatItsReleaseAdds() {
    assertThat(DriverRelease.of("d:0.2.0-rc.1").has(DriverRelease.NODE_REQUESTS)).isTrue();
    assertThat(DriverRelease.of("d:0.1.9").has(DriverRelease.NODE_REQUESTS)).isFalse();
    assertThat(DriverRelease.of("d:1.0.0").has(DriverRelease.NODE_REQUESTS)).isTrue();
  }

  @Test
  void aDriverBeforeNodeRequestsGetsNeitherTheirVariableNorTheCgroupsNorTheProvisionersRate() {
    PodSpec node = nodePod(withDriver("soko.local/soko-driver:0.1.0"));
    PodSpec controller = controllerPod(withDriver("soko.local/soko-driver:0.1.0"));

    assertThat(envNames(node)).doesNotContain(Containers.NAMESPACE_ENV);
    assertThat(envNames(controller)).doesNotContain(Containers.NAMESPACE_ENV);
    assertThat(node.getVolumes())
        .extracting(Volume::getName)
        .doesNotContain(NodeDaemonSet.CGROUP_VOLUME, NodeDaemonSet.NRI_VOLUME);
    assertThat(container(node, "soko-driver").getVolumeMounts())
        .extracting(VolumeMount::getName)
        .doesNotContain(NodeDaemonSet.CGROUP_VOLUME, NodeDaemonSet.NRI_VOLUME);
    assertThat(container(node, "csi-provisioner").getArgs())
        .noneMatch(a -> a.startsWith("--kube-api-"));
  }

  /**
   * A 0.2.0 driver has no NRI plugin: no mount of the runtime's NRI directory, so the new operator
   * renders its node plugin as before and restarts none of its pods.
   */
  @Test
  void aDriverBeforeNriGetsNoNriMount() {
    PodSpec node = nodePod(withDriver("soko.local/soko-driver:0.2.0"));
    assertThat(node.getVolumes())
        .extracting(Volume::getName)
        .doesNotContain(NodeDaemonSet.NRI_VOLUME);
    assertThat(container(node, "soko-driver").getVolumeMounts())
        .extracting(VolumeMount::getName)
        .contains(NodeDaemonSet.CGROUP_VOLUME)
        .doesNotContain(NodeDaemonSet.NRI_VOLUME);
  }

  /**
   * A 0.1.0 driver neither labels group contents nor serves groups from its controller: no group
   * snapshotter, no variable, no group class and no group rules, whatever the cluster serves.
   */
  @Test
  void aDriverBeforeGroupSnapshotsGetsNoGroupPath() {
    DesiredState d = withDriver("soko.local/soko-driver:0.1.0");
    assertThat(DriverRelease.of("d:0.1.9").has(DriverRelease.GROUP_SNAPSHOTS)).isFalse();
    assertThat(controllerPod(d).getContainers())
        .extracting(c -> c.getName())
        .containsExactly("soko-driver", "csi-resizer");
    assertThat(envNames(controllerPod(d)))
        .doesNotContain(ControllerDeployment.GROUP_SNAPSHOTTER_ENV);
    assertThat(d.groupSnapshotClass()).isNull();
    assertThat(d.rbac())
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain("soko:fast:group-snapshotter");
  }

  @Test
  void thisReleasesDriverGetsThemAll() {
    for (String image :
        List.of("soko.local/soko-driver:0.3.0-SNAPSHOT", "soko.local/soko-driver:latest")) {
      PodSpec node = nodePod(withDriver(image));
      assertThat(envNames(node)).as(image).contains(Containers.NAMESPACE_ENV);
      assertThat(envNames(controllerPod(withDriver(image))))
          .as(image)
          .contains(Containers.NAMESPACE_ENV, ControllerDeployment.GROUP_SNAPSHOTTER_ENV);
      assertThat(controllerPod(withDriver(image)).getContainers())
          .extracting(c -> c.getName())
          .as(image)
          .contains(ControllerDeployment.GROUP_SNAPSHOTTER);
      assertThat(container(node, "soko-driver").getVolumeMounts())
          .extracting(VolumeMount::getMountPath)
          .as(image)
          .contains(NodeDaemonSet.CGROUP_FS, NodeDaemonSet.NRI_DIR);
      assertThat(node.getVolumes())
          .filteredOn(v -> v.getName().equals(NodeDaemonSet.NRI_VOLUME))
          .extracting(v -> v.getHostPath().getPath() + " " + v.getHostPath().getType())
          .as(image)
          .containsExactly("/var/run/nri DirectoryOrCreate");
      assertThat(container(node, "csi-provisioner").getArgs())
          .as(image)
          .contains(
              "--kube-api-qps=" + NodeDaemonSet.PROVISIONER_API_QPS,
              "--kube-api-burst=" + NodeDaemonSet.PROVISIONER_API_BURST);
    }
  }

  private static DesiredState withDriver(String image) {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setImage(image);
    return desired(sc, "1.34");
  }

  private static List<String> envNames(PodSpec pod) {
    return container(pod, "soko-driver").getEnv().stream().map(EnvVar::getName).toList();
  }
}

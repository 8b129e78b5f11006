package dev.soko.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatusAggregatorTest {
  private static Condition condition(StorageClusterStatus s, String type) {
    return Conditions.find(s.getConditions(), type);
  }

  @Test
  void failureIsDegradedAndNotReady() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(3L);
    StorageClusterStatus s =
        StatusAggregator.aggregate(
            sc,
            StatusAggregator.Outcome.failed("DriverNameConflict", "taken"),
            null,
            null,
            null,
            null,
            0,
            "2026-01-01T00:00:00Z");
    assertThat(s.getObservedGeneration()).isEqualTo(3L);
    assertThat(condition(s, "Degraded").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Degraded").getReason()).isEqualTo("DriverNameConflict");
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("False");
  }

  @Test
  void unchangedConditionKeepsItsTransitionTimeSoStatusIsEqual() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    StorageClusterStatus first =
        StatusAggregator.aggregate(
            sc,
            StatusAggregator.Outcome.failed("InvalidSpec", "x"),
            null,
            null,
            null,
            null,
            0,
            "2026-01-01T00:00:00Z");
    sc.setStatus(first);
    StorageClusterStatus second =
        StatusAggregator.aggregate(
            sc,
            StatusAggregator.Outcome.failed("InvalidSpec", "x"),
            null,
            null,
            null,
            null,
            0,
            "2026-01-01T00:05:00Z");
    assertThat(second).isEqualTo(first);
  }

  private static StorageClusterStatus applied(StorageCluster sc) {
    return applied(sc, null);
  }

  private static StorageClusterStatus applied(
      StorageCluster sc, ClusterObserver.Workloads workloads) {
    DesiredState desired =
        DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")));
    return StatusAggregator.aggregate(
        sc,
        StatusAggregator.Outcome.applied(),
        desired,
        "v1.34.0",
        List.of(),
        workloads,
        desired.all().size(),
        "2026-01-01T00:00:00Z");
  }

  @Test
  void statusShowsBuiltInRegistrationAndOnlyTheImagesThePodsRun() {
    StorageClusterStatus s = applied(Fixtures.sample());
    assertThat(s.getRegistration()).isEqualTo(Registration.BuiltIn);
    assertThat(s.getImages())
        .containsOnlyKeys("soko-driver", "csi-provisioner", "csi-snapshotter", "csi-resizer");
  }

  @Test
  void statusShowsSidecarRegistrationWithTheRegistrarAndLivenessProbeImages() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setRegistration(Registration.Sidecars);
    StorageClusterStatus s = applied(sc);
    assertThat(s.getRegistration()).isEqualTo(Registration.Sidecars);
    assertThat(s.getImages())
        .containsEntry("node-driver-registrar", "sig-storage/csi-node-driver-registrar:v2.17.0")
        .containsEntry("liveness-probe", "sig-storage/livenessprobe:v2.19.0");
  }

  @Test
  void aFailedReconcileKeepsTheRegistrationLastApplied() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setRegistration(Registration.Sidecars);
    sc.setStatus(applied(sc));
    sc.getSpec().getDriver().setRegistration(Registration.BuiltIn);
    StorageClusterStatus failed =
        StatusAggregator.aggregate(
            sc,
            StatusAggregator.Outcome.failed("InvalidSpec", "x"),
            null,
            null,
            null,
            null,
            0,
            "2026-01-01T00:05:00Z");
    assertThat(failed.getRegistration()).isEqualTo(Registration.Sidecars);
  }

  @Test
  void poolCapacityComesFromStorageCapacityObjects() {
    StorageCluster sc = Fixtures.sample();
    var cap =
        new CSIStorageCapacityBuilder()
            .withStorageClassName("soko-nvme")
            .withNewNodeTopology()
            .addToMatchLabels("topology.soko.dev/node", "n1")
            .endNodeTopology()
            .withNewCapacity("40Gi")
            .build();
    var pools = StatusAggregator.pools(sc.getSpec(), List.of(cap));
    assertThat(pools).hasSize(1);
    assertThat(pools.get(0).total()).isEqualTo("100Gi");
    assertThat(pools.get(0).available()).isEqualTo("40Gi");
    assertThat(StatusAggregator.summary(pools).used()).isEqualTo("60Gi");
    assertThat(StatusAggregator.format(new BigDecimal(1536L * 1024 * 1024))).isEqualTo("1.5Gi");
  }

  @Test
  void readyWaitsUntilTheKubeletHasRegisteredTheDriverOnEveryNode() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    var daemonSet =
        new io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder()
            .withNewStatus()
            .withDesiredNumberScheduled(2)
            .withNumberReady(2)
            .endStatus()
            .build();
    var deployment =
        new io.fabric8.kubernetes.api.model.apps.DeploymentBuilder()
            .withNewStatus()
            .withReadyReplicas(sc.getSpec().getController().getReplicas())
            .endStatus()
            .build();
    StorageClusterStatus oneOfTwo =
        applied(sc, new ClusterObserver.Workloads(daemonSet, deployment, 1, List.of()));
    assertThat(condition(oneOfTwo, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(oneOfTwo, "Ready").getMessage())
        .contains("node plugin 2/2 ready, 1/2 registered with the kubelet");
    StorageClusterStatus both =
        applied(sc, new ClusterObserver.Workloads(daemonSet, deployment, 2, List.of()));
    assertThat(condition(both, "Ready").getStatus()).isEqualTo("True");
  }
}

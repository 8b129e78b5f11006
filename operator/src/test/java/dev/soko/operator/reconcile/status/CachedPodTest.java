package dev.soko.operator.reconcile.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.CachedPod;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Pod informer keeps a few hundred bytes of each node plugin pod, and readiness reads alike.
 */
class CachedPodTest {
  private static final DesiredState DESIRED =
      DesiredState.of(
          Fixtures.sample(),
          VersionsTable.load(),
          ClusterFacts.offline(KubernetesVersion.parse("1.34")));

  /** A node plugin pod as the DaemonSet controller and the kubelet write it. */
  private static Pod asWritten(Pod status) {
    return new PodBuilder(status)
        .editMetadata()
        .withUid("6a0c5a3e-0000-4000-8000-000000000001")
        .withResourceVersion("4711")
        .withLabels(DESIRED.nodeDaemonSet().getSpec().getTemplate().getMetadata().getLabels())
        .addToLabels("controller-revision-hash", "7d9c5b8f6")
        .addToAnnotations("kubectl.kubernetes.io/default-container", "soko-driver")
        .withManagedFields(
            new ManagedFieldsEntryBuilder()
                .withManager("kube-controller-manager")
                .withOperation("Update")
                .withNewFieldsV1()
                .addToAdditionalProperties("f:spec", Map.of("f:containers", Map.of()))
                .endFieldsV1()
                .build())
        .endMetadata()
        .withSpec(
            new PodBuilder()
                .withSpec(DESIRED.nodeDaemonSet().getSpec().getTemplate().getSpec())
                .editSpec()
                .withNodeName(status.getSpec().getNodeName())
                .endSpec()
                .build()
                .getSpec())
        .editStatus()
        .withHostIP("192.0.2.7")
        .withPodIP("192.0.2.7")
        .endStatus()
        .build();
  }

  private static Pod initWaiting() {
    return new PodBuilder(NodeReadinessTest.readyPod("n4"))
        .editStatus()
        .editFirstCondition()
        .withStatus("False")
        .endCondition()
        .addNewInitContainerStatus()
        .withName("init")
        .withReady(false)
        .withNewState()
        .withNewWaiting()
        .withReason("PodInitializing")
        .endWaiting()
        .endState()
        .endInitContainerStatus()
        .endStatus()
        .build();
  }

  private static Pod terminating() {
    return new PodBuilder(NodeReadinessTest.readyPod("n5"))
        .editMetadata()
        .withDeletionTimestamp("2026-12-01T10:00:00Z")
        .endMetadata()
        .build();
  }

  @Test
  void readinessReadsACachedPodAsTheWholeOne() {
    for (Pod status :
        List.of(
            NodeReadinessTest.readyPod("n1"),
            NodeReadinessTest.crashing("n2"),
            NodeReadinessTest.waiting("n3", "node-driver-registrar", "ContainerCreating"),
            initWaiting(),
            terminating())) {
      Pod full = asWritten(status);
      Pod cached = CachedPod.of(full);
      String node = full.getSpec().getNodeName();
      assertThat(NodeReadiness.problem(node, cached)).isEqualTo(NodeReadiness.problem(node, full));
      assertThat(NodeReadiness.of(null, List.of(cached), java.util.Set.of(node)).status())
          .isEqualTo(NodeReadiness.of(null, List.of(full), java.util.Set.of(node)).status());
      // The workload filter: namespace and the DaemonSet's selector labels.
      assertThat(cached.getMetadata().getNamespace()).isEqualTo(full.getMetadata().getNamespace());
      assertThat(cached.getMetadata().getLabels()).isEqualTo(full.getMetadata().getLabels());
      // The informer compares resource versions.
      assertThat(cached.getMetadata().getResourceVersion()).isEqualTo("4711");
    }
  }

  @Test
  void aCachedPodKeepsNeitherSpecNorManagedFields() {
    Pod full = asWritten(NodeReadinessTest.crashing("n1"));
    Pod cached = CachedPod.of(full);
    assertThat(cached.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(cached.getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(cached.getSpec().getContainers()).isNullOrEmpty();
    assertThat(cached.getSpec().getVolumes()).isNullOrEmpty();
    int fullBytes = json(full);
    int cachedBytes = json(cached);
    // One pod per node: 1,000 whole ones filled the operator's 96 MiB heap.
    assertThat(cachedBytes).isLessThan(fullBytes / 5).isLessThan(1_500);
  }

  private static int json(Pod pod) {
    return Serialization.asJson(pod).getBytes(StandardCharsets.UTF_8).length;
  }
}

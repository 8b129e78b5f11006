package dev.soko.operator.reconcile.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class RolloutProgressTest {
  private final AtomicReference<Instant> now =
      new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
  private final RolloutProgress progress = new RolloutProgress(Duration.ofMinutes(5), now::get);

  private void after(Duration d) {
    now.set(now.get().plus(d));
  }

  private static DaemonSet daemonSet(int desired, int updated, int ready) {
    return new DaemonSetBuilder()
        .withNewMetadata()
        .withName("soko-node")
        .withGeneration(2L)
        .endMetadata()
        .withNewStatus()
        .withObservedGeneration(2L)
        .withDesiredNumberScheduled(desired)
        .withUpdatedNumberScheduled(updated)
        .withNumberReady(ready)
        .endStatus()
        .build();
  }

  private RolloutProgress.Verdict judge(DaemonSet ds, Deployment dep, List<Pod> pods) {
    return judge(ds, dep, pods, List.of());
  }

  private RolloutProgress.Verdict judge(
      DaemonSet ds, Deployment dep, List<Pod> pods, List<Pod> controllerPods) {
    Set<String> registered = Set.of("n0", "n1", "n2");
    var w = new ClusterObserver.Workloads(ds, dep, registered, pods, controllerPods, List.of());
    return progress.judge("c", w, NodeReadiness.of(ds.getStatus(), pods, registered));
  }

  private static final Deployment MOVING =
      new DeploymentBuilder().withNewMetadata().withName("soko-controller").endMetadata().build();

  @Test
  void aNodePluginRolloutThatDoesNotMoveForTheBoundStallsAndClearsWhenItMoves() {
    List<Pod> stuck =
        List.of(
            NodeReadinessTest.readyPod("n0"),
            NodeReadinessTest.waiting("n1", "soko-driver", "ContainerCreating"),
            NodeReadinessTest.waiting("n2", "soko-driver", "ContainerCreating"));
    RolloutProgress.Verdict first = judge(daemonSet(3, 1, 1), MOVING, stuck);
    assertThat(first.stalled()).isFalse();
    assertThat(first.recheck()).isEqualTo(Duration.ofMinutes(5));

    after(Duration.ofMinutes(4));
    RolloutProgress.Verdict later = judge(daemonSet(3, 1, 1), MOVING, stuck);
    assertThat(later.stalled()).isFalse();
    assertThat(later.recheck()).isEqualTo(Duration.ofMinutes(1));

    after(Duration.ofMinutes(1));
    RolloutProgress.Verdict stalled = judge(daemonSet(3, 1, 1), MOVING, stuck);
    assertThat(stalled.message())
        .contains("no progress since 2026-01-01T00:00:00Z")
        .contains("n1 (soko-driver ContainerCreating)", "n2 (soko-driver ContainerCreating)");
    assertThat(stalled.recheck()).isNull();
    // The message does not change while it stays stalled: no status write per reconcile.
    after(Duration.ofMinutes(3));
    assertThat(judge(daemonSet(3, 1, 1), MOVING, stuck).message()).isEqualTo(stalled.message());

    // One more pod ready: progress, and the clock starts again.
    List<Pod> moved =
        List.of(
            NodeReadinessTest.readyPod("n0"),
            NodeReadinessTest.readyPod("n1"),
            NodeReadinessTest.waiting("n2", "soko-driver", "ContainerCreating"));
    RolloutProgress.Verdict moving = judge(daemonSet(3, 2, 2), MOVING, moved);
    assertThat(moving.stalled()).isFalse();
    assertThat(moving.recheck()).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void aCompleteRolloutNeverStalls() {
    List<Pod> ready =
        List.of(
            NodeReadinessTest.readyPod("n0"),
            NodeReadinessTest.readyPod("n1"),
            NodeReadinessTest.readyPod("n2"));
    judge(daemonSet(3, 3, 3), MOVING, ready);
    after(Duration.ofHours(1));
    RolloutProgress.Verdict v = judge(daemonSet(3, 3, 3), MOVING, ready);
    assertThat(v.stalled()).isFalse();
    assertThat(v.recheck()).isNull();
  }

  @Test
  void theControllerStallsWhenItsDeploymentExceededItsProgressDeadline() {
    Deployment dep =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName("soko-controller")
            .endMetadata()
            .withNewStatus()
            .addNewCondition()
            .withType("Progressing")
            .withStatus("False")
            .withReason("ProgressDeadlineExceeded")
            .withMessage("ReplicaSet \"soko-controller-7d\" has timed out progressing.")
            .endCondition()
            .endStatus()
            .build();
    List<Pod> ready = List.of(NodeReadinessTest.readyPod("n0"));
    Pod controllerPod = NodeReadinessTest.waiting("cp", "csi-resizer", "ImagePullBackOff");
    RolloutProgress.Verdict v = judge(daemonSet(1, 1, 1), dep, ready, List.of(controllerPod));
    assertThat(v.message())
        .contains("controller Deployment soko-controller ProgressDeadlineExceeded")
        .contains("timed out progressing")
        .contains("soko-node-cp (csi-resizer ImagePullBackOff)");
  }

  @Test
  void aStallIsDegradedAndNotProgressingWithItsOwnReason() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    var w = StatusAggregatorTest.workloads(sc, 3, 3, 3);
    StorageClusterStatus s =
        new StatusAggregator(sc, "1.2.3", "2026-01-01T00:00:00Z")
            .workloads(w, sc.getSpec().getController().getReplicas())
            .stalled("node plugin rollout made no progress since ...: n1 (soko-driver Pending)")
            .build();
    Condition degraded = Conditions.find(s.getConditions(), Conditions.DEGRADED);
    assertThat(degraded.getStatus()).isEqualTo("True");
    assertThat(degraded.getReason()).isEqualTo("RolloutStalled");
    assertThat(degraded.getMessage()).contains("n1 (soko-driver Pending)");
    Condition progressing = Conditions.find(s.getConditions(), Conditions.PROGRESSING);
    assertThat(progressing.getStatus()).isEqualTo("False");
    assertThat(progressing.getReason()).isEqualTo("RolloutStalled");
  }
}

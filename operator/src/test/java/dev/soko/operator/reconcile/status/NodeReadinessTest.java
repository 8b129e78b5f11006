package dev.soko.operator.reconcile.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.NodeProblem;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatusBuilder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NodeReadinessTest {
  static Pod readyPod(String node) {
    return pod(node)
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  static Pod crashing(String node) {
    return waiting(node, "soko-driver", "CrashLoopBackOff");
  }

  static Pod waiting(String node, String container, String reason) {
    return pod(node)
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus("False")
        .endCondition()
        .addNewContainerStatus()
        .withName("csi-provisioner")
        .withReady(true)
        .endContainerStatus()
        .addNewContainerStatus()
        .withName(container)
        .withReady(false)
        .withNewState()
        .withNewWaiting()
        .withReason(reason)
        .withMessage("back-off 5m0s restarting failed container")
        .endWaiting()
        .endState()
        .endContainerStatus()
        .endStatus()
        .build();
  }

  private static PodBuilder pod(String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("soko-node-" + node)
        .withNamespace("soko-system")
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .endSpec();
  }

  private static NodeReadiness.Result of(List<Pod> pods, Set<String> registered) {
    return NodeReadiness.of(
        new DaemonSetStatusBuilder()
            .withDesiredNumberScheduled(pods.size())
            .withNumberReady(
                (int) pods.stream().filter(p -> NodeReadiness.problem("", p) == null).count())
            .build(),
        pods,
        registered);
  }

  @Test
  void theWaitingReasonOfTheContainerThatIsNotReadyIsReported() {
    var r = of(List.of(waiting("n1", "soko-driver", "ImagePullBackOff")), Set.of("n1"));
    assertThat(r.status().problems())
        .containsExactly(new NodeProblem("n1", "ImagePullBackOff", "soko-driver"));
    assertThat(r.failing()).isEqualTo(1);
    assertThat(r.status().available()).isZero();
  }

  @Test
  void aStartingContainerIsInProgressNotFailing() {
    var r = of(List.of(waiting("n1", "soko-driver", "ContainerCreating")), Set.of());
    assertThat(r.failing()).isZero();
    assertThat(r.inProgress()).isEqualTo(1);
  }

  @Test
  void aReadyPodOnANodeWithoutTheDriverRegisteredDoesNotServe() {
    var r = of(List.of(readyPod("n1"), readyPod("n2")), Set.of("n2"));
    assertThat(r.status().available()).isEqualTo(1);
    assertThat(r.status().problems()).containsExactly(new NodeProblem("n1", "NotRegistered", null));
  }

  @Test
  void problemsAreBoundedFailingFirstAndTheRestCounted() {
    List<Pod> pods = new ArrayList<>();
    Set<String> registered = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String node = String.format("n%04d", i);
      registered.add(node);
      pods.add(
          i % 50 == 0
              ? crashing(node)
              : i % 70 == 0 ? waiting(node, "soko-driver", "ContainerCreating") : readyPod(node));
    }
    var r = of(pods, registered);
    assertThat(r.status().problems()).hasSize(NodeReadiness.LISTED);
    assertThat(r.status().problems()).allMatch(p -> p.reason().equals("CrashLoopBackOff"));
    assertThat(r.failing()).isEqualTo(20);
    assertThat(r.status().moreProblems()).isEqualTo(r.all().size() - NodeReadiness.LISTED);
    assertThat(NodeReadiness.describe(r.all()))
        .startsWith("n0000 (soko-driver CrashLoopBackOff), n0050")
        .endsWith(" and " + (r.all().size() - NodeReadiness.LISTED) + " more");
  }

  @Test
  void ninetyPercentOfTheDesiredNodesRoundedUpAreNeeded() {
    assertThat(NodeReadiness.required(0)).isZero();
    assertThat(NodeReadiness.required(1)).isEqualTo(1);
    assertThat(NodeReadiness.required(2)).isEqualTo(2);
    assertThat(NodeReadiness.required(10)).isEqualTo(9);
    assertThat(NodeReadiness.required(11)).isEqualTo(10);
    assertThat(NodeReadiness.required(1000)).isEqualTo(900);
  }
}

package dev.soko.operator.it;

import static dev.soko.operator.it.StorageClusterLifecycleIT.admin;
import static dev.soko.operator.it.StorageClusterLifecycleIT.cluster;
import static dev.soko.operator.it.StorageClusterLifecycleIT.condition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A rollout that stops moving is escalated to Degraded=True (RolloutStalled) with the nodes or pods
 * that hold it, and clears when it moves again, on the real API server. The operator here runs with
 * a {@link TestCluster#ROLLOUT_DEADLINE} of seconds. This API server runs no DaemonSet or
 * Deployment controller and no kubelet: the test writes the status they would.
 */
class RolloutStallIT {
  @BeforeAll
  static void start() throws Exception {
    StorageClusterLifecycleIT.start();
  }

  private static boolean is(StorageCluster s, String type, String status, String reason) {
    var c = condition(s, type);
    return status.equals(c.getStatus()) && reason.equals(c.getReason());
  }

  @Test
  void aNodePluginRolloutStuckPastTheBoundIsDegradedUntilItMovesAgain() {
    StorageClusterLifecycleIT.create(Specs.cluster("stall"));
    controllerReady("stall");
    daemonSetStatus("stall", 2, 1);
    StorageClusterLifecycleIT.nodePod("stall", "stall-a", true);
    Pod stuck = StorageClusterLifecycleIT.nodePod("stall", "stall-b", "ContainerCreating");
    StorageClusterLifecycleIT.register("stall", "stall-a");
    StorageClusterLifecycleIT.register("stall", "stall-b");

    long start = System.nanoTime();
    StorageCluster rolling =
        Await.until(
            "stall rolling out",
            () -> cluster.get("stall"),
            s -> is(s, "Progressing", "True", "RollingOut"));
    assertThat(condition(rolling, "Degraded").getStatus()).isEqualTo("False");

    // Nothing changes from here on: no event reaches the operator, only its own recheck.
    StorageCluster stalled =
        Await.until(
            "stall escalated",
            TestCluster.ROLLOUT_DEADLINE.plus(Duration.ofSeconds(30)),
            () -> cluster.get("stall"),
            s -> is(s, "Degraded", "True", "RolloutStalled"));
    Duration waited = Duration.ofNanos(System.nanoTime() - start);
    assertThat(waited).isGreaterThanOrEqualTo(TestCluster.ROLLOUT_DEADLINE.minusSeconds(1));
    assertThat(condition(stalled, "Degraded").getMessage())
        .contains("node plugin rollout made no progress")
        .contains("stall-b (soko-driver ContainerCreating)")
        .doesNotContain("stall-a");
    assertThat(condition(stalled, "Progressing").getReason()).isEqualTo("RolloutStalled");
    assertThat(condition(stalled, "Progressing").getStatus()).isEqualTo("False");

    // The stuck pod becomes ready and the DaemonSet counts it: the rollout moved and is done.
    Pod started = admin.resource(stuck).get();
    started.getStatus().getConditions().get(0).setStatus("True");
    var driver = started.getStatus().getContainerStatuses().get(0);
    driver.setReady(true);
    driver.setState(
        new ContainerStateBuilder()
            .withNewRunning()
            .withStartedAt("2026-01-01T00:00:00Z")
            .endRunning()
            .build());
    admin.resource(started).updateStatus();
    daemonSetStatus("stall", 2, 2);
    StorageCluster healed =
        Await.until(
            "stall healed",
            () -> cluster.get("stall"),
            s -> is(s, "Degraded", "False", "AsExpected"));
    assertThat(condition(healed, "Progressing").getReason()).isEqualTo("RolloutComplete");
    assertThat(condition(healed, "Ready").getStatus()).isEqualTo("True");
  }

  @Test
  void aControllerDeploymentPastItsProgressDeadlineIsDegradedUntilItProgresses() {
    StorageClusterLifecycleIT.create(Specs.cluster("dead"));
    daemonSetStatus("dead", 1, 1);
    StorageClusterLifecycleIT.nodePod("dead", "dead-a", true);
    StorageClusterLifecycleIT.register("dead", "dead-a");
    deploymentProgress("dead", "False", "ProgressDeadlineExceeded");

    StorageCluster stalled =
        Await.until(
            "dead escalated",
            () -> cluster.get("dead"),
            s -> is(s, "Degraded", "True", "RolloutStalled"));
    assertThat(condition(stalled, "Degraded").getMessage())
        .contains("controller Deployment dead-controller ProgressDeadlineExceeded")
        .contains("has timed out progressing");

    deploymentProgress("dead", "True", "NewReplicaSetAvailable");
    Await.until(
        "dead healed",
        () -> cluster.get("dead"),
        s -> is(s, "Degraded", "False", "AsExpected") && is(s, "Ready", "True", "Ready"));
  }

  private static void daemonSetStatus(String name, int desired, int ready) {
    DaemonSet ds = StorageClusterLifecycleIT.daemonSet(name);
    ds.setStatus(
        new DaemonSetStatusBuilder()
            .withObservedGeneration(ds.getMetadata().getGeneration())
            .withDesiredNumberScheduled(desired)
            .withCurrentNumberScheduled(desired)
            .withUpdatedNumberScheduled(desired)
            .withNumberReady(ready)
            .withNumberAvailable(ready)
            .withNumberMisscheduled(0)
            .build());
    admin.resource(ds).updateStatus();
  }

  private static Deployment controller(String name) {
    return admin
        .apps()
        .deployments()
        .inNamespace("soko-" + name)
        .withName(name + "-controller")
        .get();
  }

  private static void controllerReady(String name) {
    Deployment dep = controller(name);
    dep.setStatus(new DeploymentStatusBuilder().withReplicas(1).withReadyReplicas(1).build());
    admin.resource(dep).updateStatus();
  }

  /** What the Deployment controller writes when the rollout passes or makes its deadline. */
  private static void deploymentProgress(String name, String status, String reason) {
    Deployment dep = controller(name);
    boolean ok = "True".equals(status);
    dep.setStatus(
        new DeploymentStatusBuilder()
            .withReplicas(1)
            .withReadyReplicas(ok ? 1 : 0)
            .addNewCondition()
            .withType("Progressing")
            .withStatus(status)
            .withReason(reason)
            .withMessage(
                ok
                    ? "ReplicaSet \"" + name + "-controller-1\" has successfully progressed."
                    : "ReplicaSet \"" + name + "-controller-1\" has timed out progressing.")
            .withLastUpdateTime("2026-01-01T00:00:00Z")
            .withLastTransitionTime("2026-01-01T00:00:00Z")
            .endCondition()
            .build());
    admin.resource(dep).updateStatus();
  }
}

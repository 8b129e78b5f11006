package dev.soko.operator.reconcile.status;

import dev.soko.api.v1alpha1.NodeProblem;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatus;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Tells a rollout that has stopped moving from one still under way. The controller Deployment
 * stalls as Kubernetes says: its Progressing condition is False with ProgressDeadlineExceeded
 * (after its progressDeadlineSeconds). A DaemonSet has no deadline of its own, so the node plugin
 * stalls when nodes do not serve and none of its counts (updated, ready, available, serving nodes)
 * has changed for {@code deadline}. The time of the last change is kept in memory: after an
 * operator restart the clock starts again, which delays the verdict and never makes one up.
 */
public final class RolloutProgress {
  static final String DEADLINE_EXCEEDED = "ProgressDeadlineExceeded";

  /**
   * @param message what stalled and the problem nodes or pods, for Degraded; null when moving
   * @param recheck when to look again because the deadline may pass without any event; null when
   *     nothing is pending
   */
  public record Verdict(String message, Duration recheck) {
    boolean stalled() {
      return message != null;
    }
  }

  private record Seen(String counts, Instant since) {}

  private final Duration deadline;
  private final Supplier<Instant> clock;
  private final Map<String, Seen> nodePlugin = new ConcurrentHashMap<>();

  public RolloutProgress(Duration deadline, Supplier<Instant> clock) {
    this.deadline = deadline;
    this.clock = clock;
  }

  public Verdict judge(String cluster, ClusterObserver.Workloads w, NodeReadiness.Result nodes) {
    List<String> stalled = new ArrayList<>();
    String controller = controllerStall(w.deployment(), w.controllerPods());
    if (controller != null) {
      stalled.add(controller);
    }
    Duration recheck = null;
    if (nodes.all().isEmpty()) {
      nodePlugin.remove(cluster);
    } else {
      Instant now = clock.get();
      String counts = counts(w.daemonSet(), nodes);
      Seen seen =
          nodePlugin.compute(
              cluster,
              (k, old) -> old != null && old.counts().equals(counts) ? old : new Seen(counts, now));
      Duration still = Duration.between(seen.since(), now);
      if (still.compareTo(deadline) >= 0) {
        // The time of the last change, not the time since: a message that changes with every
        // reconcile would be a status write with every reconcile.
        stalled.add(
            "node plugin rollout made no progress since "
                + seen.since().truncatedTo(ChronoUnit.SECONDS)
                + " (bound "
                + deadline.toSeconds()
                + " s): "
                + NodeReadiness.describe(nodes.all()));
      } else {
        recheck = deadline.minus(still);
      }
    }
    return new Verdict(stalled.isEmpty() ? null : String.join("; ", stalled), recheck);
  }

  /** Forgets a StorageCluster (deleted). */
  public void forget(String cluster) {
    nodePlugin.remove(cluster);
  }

  /** What moves while a DaemonSet rolls out; any change of it is progress. */
  private static String counts(DaemonSet ds, NodeReadiness.Result nodes) {
    DaemonSetStatus s = ds == null ? null : ds.getStatus();
    return s == null
        ? "none/" + nodes.available()
        : Objects.toString(ds.getMetadata().getGeneration())
            + "/"
            + s.getObservedGeneration()
            + "/"
            + s.getDesiredNumberScheduled()
            + "/"
            + s.getUpdatedNumberScheduled()
            + "/"
            + s.getNumberReady()
            + "/"
            + s.getNumberAvailable()
            + "/"
            + nodes.available();
  }

  /** The Deployment controller's own verdict, with the controller pods that do not run. */
  private static String controllerStall(Deployment dep, List<Pod> pods) {
    if (dep == null || dep.getStatus() == null || dep.getStatus().getConditions() == null) {
      return null;
    }
    return dep.getStatus().getConditions().stream()
        .filter(c -> "Progressing".equals(c.getType()) && "False".equals(c.getStatus()))
        .filter(c -> DEADLINE_EXCEEDED.equals(c.getReason()))
        .findFirst()
        .map(
            c -> {
              List<NodeProblem> problems = new ArrayList<>();
              for (Pod pod : pods) {
                NodeProblem p = NodeReadiness.problem(pod.getMetadata().getName(), pod);
                if (p != null) {
                  problems.add(p);
                }
              }
              return "controller Deployment "
                  + dep.getMetadata().getName()
                  + " "
                  + DEADLINE_EXCEEDED
                  + (c.getMessage() == null ? "" : " (" + c.getMessage() + ")")
                  + (problems.isEmpty() ? "" : ": " + NodeReadiness.describe(problems));
            })
        .orElse(null);
  }
}

package dev.soko.operator.reconcile.status;

import dev.soko.api.v1alpha1.NodeProblem;
import dev.soko.api.v1alpha1.NodeStatus;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Which nodes serve volumes, and why the others do not, from the node plugin pods and the CSINode
 * registrations. A node serves when its node plugin pod is ready and the kubelet lists the driver
 * on its CSINode. The result holds counts and at most {@link #LISTED} problem nodes, so status does
 * not grow with the cluster.
 *
 * <p>The readiness rule: the installation is Ready when at least {@link #READY_PERCENT}% of the
 * desired nodes (rounded up, at least one) serve volumes; one bad node among many never holds the
 * whole installation not-Ready. A node is failing (Degraded) when a container of its pod waits or
 * ended for one of {@link #FAILING}; any other problem is a rollout in progress (Progressing).
 */
final class NodeReadiness {
  /** Share of desired nodes that must serve volumes for Ready. */
  static final int READY_PERCENT = 90;

  /** Problem nodes listed in status; the rest are counted. */
  static final int LISTED = 10;

  /** Waiting or terminated reasons that do not resolve by waiting. */
  static final Set<String> FAILING =
      Set.of(
          "CrashLoopBackOff",
          "ImagePullBackOff",
          "ErrImagePull",
          "ErrImageNeverPull",
          "InvalidImageName",
          "CreateContainerConfigError",
          "CreateContainerError",
          "RunContainerError",
          "OOMKilled",
          "Error",
          "Unschedulable");

  static final String NOT_REGISTERED = "NotRegistered";

  /**
   * @param failing problem nodes whose reason is in {@link #FAILING}
   * @param inProgress problem nodes whose reason is not
   */
  record Result(NodeStatus status, int failing, int inProgress, List<NodeProblem> all) {
    int desired() {
      return status.desired();
    }

    int available() {
      return status.available();
    }
  }

  private NodeReadiness() {}

  /** The nodes needed for Ready: {@value #READY_PERCENT}% of desired, rounded up. */
  static int required(int desired) {
    return desired == 0 ? 0 : Math.max(1, (desired * READY_PERCENT + 99) / 100);
  }

  public static Result of(DaemonSetStatus ds, List<Pod> pods, Set<String> registered) {
    int desired =
        ds == null || ds.getDesiredNumberScheduled() == null ? 0 : ds.getDesiredNumberScheduled();
    int ready = ds == null || ds.getNumberReady() == null ? 0 : ds.getNumberReady();
    int available = 0;
    List<NodeProblem> problems = new ArrayList<>();
    for (Pod pod : pods) {
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      String node =
          pod.getSpec() == null || pod.getSpec().getNodeName() == null
              ? pod.getMetadata().getName()
              : pod.getSpec().getNodeName();
      NodeProblem problem = problem(node, pod);
      if (problem == null && !registered.contains(node)) {
        problem = new NodeProblem(node, NOT_REGISTERED, null);
      }
      if (problem == null) {
        available++;
      } else {
        problems.add(problem);
      }
    }
    problems.sort(
        Comparator.comparing((NodeProblem p) -> !FAILING.contains(p.reason()))
            .thenComparing(NodeProblem::node));
    int failing = (int) problems.stream().filter(p -> FAILING.contains(p.reason())).count();
    List<NodeProblem> listed = List.copyOf(problems.subList(0, Math.min(LISTED, problems.size())));
    int more = problems.size() - listed.size();
    NodeStatus status =
        new NodeStatus(
            desired,
            ready,
            registered.size(),
            available,
            listed.isEmpty() ? null : listed,
            more > 0 ? more : null);
    return new Result(status, failing, problems.size() - failing, problems);
  }

  /** Why the pod does not serve, or null when it is ready. */
  public static NodeProblem problem(String node, Pod pod) {
    var status = pod.getStatus();
    if (status != null
        && status.getConditions() != null
        && status.getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))) {
      return null;
    }
    List<ContainerStatus> containers = new ArrayList<>();
    if (status != null) {
      if (status.getInitContainerStatuses() != null) {
        containers.addAll(status.getInitContainerStatuses());
      }
      if (status.getContainerStatuses() != null) {
        containers.addAll(status.getContainerStatuses());
      }
    }
    NodeProblem waiting = null;
    for (ContainerStatus c : containers) {
      if (Boolean.TRUE.equals(c.getReady())) {
        continue;
      }
      String reason = reason(c);
      NodeProblem p = new NodeProblem(node, reason, c.getName());
      if (FAILING.contains(reason)) {
        return p;
      }
      if (waiting == null) {
        waiting = p;
      }
    }
    if (waiting != null) {
      return waiting;
    }
    if (status != null && status.getConditions() != null) {
      var unschedulable =
          status.getConditions().stream()
              .filter(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()))
              .map(c -> Objects.requireNonNullElse(c.getReason(), "Pending"))
              .findFirst();
      if (unschedulable.isPresent()) {
        return new NodeProblem(node, unschedulable.get(), null);
      }
    }
    return new NodeProblem(node, "Pending", null);
  }

  private static String reason(ContainerStatus c) {
    var state = c.getState();
    if (state != null && state.getWaiting() != null && state.getWaiting().getReason() != null) {
      return state.getWaiting().getReason();
    }
    if (state != null
        && state.getTerminated() != null
        && state.getTerminated().getReason() != null) {
      return state.getTerminated().getReason();
    }
    // Running (perhaps again after a crash) but its readiness probe does not pass yet.
    return "ContainerNotReady";
  }

  /** "node-7 (soko-driver CrashLoopBackOff), node-9 (NotRegistered) and 3 more". */
  static String describe(List<NodeProblem> problems) {
    StringBuilder sb = new StringBuilder();
    int shown = Math.min(LISTED, problems.size());
    for (int i = 0; i < shown; i++) {
      NodeProblem p = problems.get(i);
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(p.node())
          .append(" (")
          .append(p.container() == null ? "" : p.container() + " ")
          .append(p.reason())
          .append(')');
    }
    if (problems.size() > shown) {
      sb.append(" and ").append(problems.size() - shown).append(" more");
    }
    return sb.toString();
  }
}

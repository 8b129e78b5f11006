package dev.soko.operator.reconcile.status;

import dev.soko.api.v1alpha1.NodeProblem;
import dev.soko.api.v1alpha1.OrphanedVolumes;
import dev.soko.api.v1alpha1.PoolStatus;
import dev.soko.api.v1alpha1.ReplicaStatus;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.operator.model.Component;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The one place that computes a StorageCluster's status. It starts from the previous status and the
 * generation; the reconcile's collaborators add what they found (objects applied, an error,
 * warnings, compatibility, the workloads); {@link #build} derives the conditions:
 *
 * <ul>
 *   <li>Ready: nothing failed, the controller has a ready replica and at least {@link
 *       NodeReadiness#READY_PERCENT}% of the desired nodes serve volumes.
 *   <li>Degraded: an error (rejected apply, invalid spec, conflict), node plugin pods that fail in
 *       a way waiting does not fix, or pools refused on their nodes; the message names them
 *       (bounded).
 *   <li>Progressing: a rollout is under way: nodes or controller replicas not ready yet for a
 *       reason other than a failure.
 *   <li>A rollout that stopped moving ({@link RolloutProgress}) is not Progressing and is Degraded,
 *       both with reason {@value #ROLLOUT_STALLED} and the nodes or pods that hold it.
 * </ul>
 *
 * Conditions keep their lastTransitionTime while their status does not change; a status is compared
 * by its serialized form ({@link #same}).
 */
public final class StatusAggregator {
  static final String ROLLOUT_STALLED = "RolloutStalled";

  private final StorageClusterStatus previous;
  private final StorageClusterStatus s = new StorageClusterStatus();
  private final long generation;
  private final String operatorVersion;
  private final String now;
  private final List<String> warnings = new ArrayList<>();
  private String errorReason;
  private String errorMessage;
  private List<String> compatibility;
  private NodeReadiness.Result nodes;
  private DaemonSet daemonSet;
  private String stalled;
  private List<PoolStatus> refusedPools = List.of();

  /**
   * @param operatorVersion the release of this operator, which every status it writes names
   */
  public StatusAggregator(StorageCluster sc, String operatorVersion, String now) {
    this.previous = sc.getStatus() == null ? new StorageClusterStatus() : sc.getStatus();
    this.generation =
        sc.getMetadata().getGeneration() == null ? 0 : sc.getMetadata().getGeneration();
    this.operatorVersion = operatorVersion;
    this.now = now;
    // What this reconcile does not observe stays as last observed.
    s.setKubernetesVersion(previous.getKubernetesVersion());
    s.setRegistration(previous.getRegistration());
    s.setImages(previous.getImages());
    s.setController(previous.getController());
    s.setNodes(previous.getNodes());
    s.setCapacity(previous.getCapacity());
    s.setPoolSummary(previous.getPoolSummary());
    s.setPools(previous.getPools());
    s.setMorePools(previous.getMorePools());
    s.setOrphanedVolumes(previous.getOrphanedVolumes());
    s.setChangedBlockTracking(previous.getChangedBlockTracking());
  }

  /** Every desired object was applied (or already up to date). */
  public StatusAggregator applied(DesiredState desired, int objects) {
    s.setAppliedObjects(objects);
    s.setRegistration(desired.registration());
    s.setImages(usedImages(desired));
    s.setChangedBlockTracking(desired.changedBlockTracking().state());
    warnings.addAll(desired.notices());
    return this;
  }

  /** The reconcile failed: Degraded with this reason and message, never Ready. */
  public StatusAggregator error(String reason, String message) {
    errorReason = reason;
    errorMessage = message;
    return this;
  }

  public StatusAggregator kubernetesVersion(String version) {
    s.setKubernetesVersion(version);
    return this;
  }

  /** Problems from {@code Compatibility}; empty when compatible. */
  public StatusAggregator compatibility(List<String> problems) {
    compatibility = problems;
    return this;
  }

  public StatusAggregator workloads(ClusterObserver.Workloads w, int controllerReplicas) {
    DeploymentStatus ds = w.deployment() == null ? null : w.deployment().getStatus();
    int ready = ds == null || ds.getReadyReplicas() == null ? 0 : ds.getReadyReplicas();
    s.setController(new ReplicaStatus(controllerReplicas, ready));
    daemonSet = w.daemonSet();
    nodes =
        NodeReadiness.of(
            daemonSet == null ? null : daemonSet.getStatus(), w.nodePods(), w.registeredNodes());
    s.setNodes(nodes.status());
    return this;
  }

  /** What the workloads showed of the nodes; null before {@link #workloads}. */
  public NodeReadiness.Result nodes() {
    return nodes;
  }

  /** A rollout that stopped moving ({@link RolloutProgress}); null while it moves or is done. */
  public StatusAggregator stalled(String message) {
    stalled = message;
    return this;
  }

  public StatusAggregator pools(PoolSummary.Result pools) {
    s.setPoolSummary(pools.summary());
    s.setPools(pools.listed());
    s.setMorePools(pools.more() > 0 ? pools.more() : null);
    s.setCapacity(pools.capacity());
    refusedPools = pools.refused();
    return this;
  }

  /** What {@code NodeLoss} found; null when there are no orphaned volumes. */
  public StatusAggregator orphanedVolumes(OrphanedVolumes report) {
    s.setOrphanedVolumes(report);
    return this;
  }

  public StorageClusterStatus build() {
    s.setObservedGeneration(generation);
    s.setOperatorVersion(operatorVersion);
    Conditions c = new Conditions(previous.getConditions(), generation, now);
    if (errorReason != null) {
      s.setAppliedObjects(null);
      c.set(Conditions.READY, false, errorReason, errorMessage);
      c.set(Conditions.PROGRESSING, false, errorReason, errorMessage);
      c.set(Conditions.DEGRADED, true, errorReason, errorMessage);
    } else {
      rollout(c);
    }
    compatible(c);
    s.setConditions(c.build());
    return s;
  }

  private void rollout(Conditions c) {
    ReplicaStatus ctrl = s.getController() == null ? new ReplicaStatus(0, 0) : s.getController();
    int desired = nodes == null ? 0 : nodes.desired();
    int available = nodes == null ? 0 : nodes.available();
    int required = NodeReadiness.required(desired);
    boolean controllerServes = ctrl.desired() == 0 || ctrl.ready() >= 1;
    boolean ready = nodes != null && controllerServes && desired > 0 && available >= required;
    String summary =
        "controller "
            + ctrl.ready()
            + "/"
            + ctrl.desired()
            + " ready, node plugin "
            + (nodes == null ? 0 : nodes.status().ready())
            + "/"
            + desired
            + " ready, "
            + (nodes == null ? 0 : nodes.status().registered())
            + "/"
            + desired
            + " registered with the kubelet, "
            + available
            + "/"
            + desired
            + " serve volumes ("
            + required
            + " needed for Ready)";
    String notReady =
        nodes == null
            ? "NotObserved"
            : desired == 0 && daemonSet != null && daemonSet.getStatus() != null
                ? "NoNodes"
                : !controllerServes ? "ControllerUnavailable" : "NodesUnavailable";
    c.set(Conditions.READY, ready, ready ? "Ready" : notReady, summary);

    int failing = nodes == null ? 0 : nodes.failing();
    boolean progressing =
        nodes == null
            || nodes.inProgress() > 0
            || available + failing < desired
            || ctrl.ready() < ctrl.desired();
    String notices = warnings.isEmpty() ? "" : "; " + String.join("; ", warnings);
    // A refused pool degrades the installation but leaves Ready alone: the node serves its other
    // pools and the refused pool's existing volumes.
    String refusals = refusedPools.isEmpty() ? "" : PoolRefusals.describe(refusedPools);
    if (stalled != null) {
      c.set(Conditions.PROGRESSING, false, ROLLOUT_STALLED, stalled);
      c.set(
          Conditions.DEGRADED,
          true,
          ROLLOUT_STALLED,
          stalled + (refusals.isEmpty() ? "" : "; " + refusals) + notices);
      return;
    }
    c.set(
        Conditions.PROGRESSING,
        progressing,
        progressing ? "RollingOut" : failing > 0 ? "Stalled" : "RolloutComplete",
        s.getAppliedObjects() + " objects applied; " + summary);

    if (failing > 0) {
      List<NodeProblem> failed =
          nodes.all().stream().filter(p -> NodeReadiness.FAILING.contains(p.reason())).toList();
      c.set(
          Conditions.DEGRADED,
          true,
          "NodesFailing",
          failing
              + " of "
              + desired
              + " nodes fail to run the node plugin: "
              + NodeReadiness.describe(failed)
              + (refusals.isEmpty() ? "" : "; " + refusals)
              + notices);
    } else if (!refusals.isEmpty()) {
      c.set(Conditions.DEGRADED, true, PoolRefusals.REASON, refusals + notices);
    } else {
      c.set(Conditions.DEGRADED, false, "AsExpected", "all objects applied" + notices);
    }
  }

  private void compatible(Conditions c) {
    if (compatibility == null) {
      Condition old = Conditions.find(previous.getConditions(), Conditions.COMPATIBLE);
      if (old != null) {
        c.set(
            Conditions.COMPATIBLE,
            "True".equals(old.getStatus()),
            old.getReason(),
            old.getMessage());
      }
    } else if (compatibility.isEmpty()) {
      c.set(
          Conditions.COMPATIBLE,
          true,
          "Supported",
          "the cluster serves every API the sidecars for Kubernetes "
              + s.getKubernetesVersion()
              + " need");
    } else {
      c.set(Conditions.COMPATIBLE, false, "MissingApis", String.join("; ", compatibility));
    }
  }

  private static Map<String, String> usedImages(DesiredState desired) {
    Map<String, String> images = new TreeMap<>();
    List<Container> containers = new ArrayList<>();
    containers.addAll(desired.nodeDaemonSet().getSpec().getTemplate().getSpec().getContainers());
    containers.addAll(
        desired.controllerDeployment().getSpec().getTemplate().getSpec().getContainers());
    containers.forEach(ct -> images.put(ct.getName(), ct.getImage()));
    images.putIfAbsent(Component.DRIVER.key(), desired.images().get(Component.DRIVER));
    return images;
  }

  /**
   * Whether two statuses are the same, compared by their serialized form: every field the API
   * server would store takes part, including fields added later.
   */
  public static boolean same(StorageClusterStatus a, StorageClusterStatus b) {
    var mapper = Serialization.jsonMapper();
    return Objects.equals(mapper.valueToTree(a), mapper.valueToTree(b));
  }
}

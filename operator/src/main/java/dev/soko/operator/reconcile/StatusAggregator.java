package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.CapacityStatus;
import dev.soko.api.v1alpha1.NodeStatus;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.PoolStatus;
import dev.soko.api.v1alpha1.ReplicaStatus;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.operator.model.Component;
import dev.soko.operator.model.DesiredState;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatus;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The one place that computes a StorageCluster's status and conditions. */
final class StatusAggregator {
  static final String TOPOLOGY_KEY = "topology.soko.dev/node";

  /** How the reconcile went before workloads are looked at. */
  record Outcome(boolean ok, String reason, String message) {
    static Outcome applied() {
      return new Outcome(true, "AsExpected", "all objects applied");
    }

    static Outcome failed(String reason, String message) {
      return new Outcome(false, reason, message);
    }
  }

  private StatusAggregator() {}

  /**
   * @param desired null when nothing was applied (invalid spec, conflict)
   * @param compatibility problems from {@code Compatibility}; null when unknown
   * @param workloads null when not observed
   */
  static StorageClusterStatus aggregate(
      StorageCluster sc,
      Outcome outcome,
      DesiredState desired,
      String kubernetesVersion,
      List<String> compatibility,
      ClusterObserver.Workloads workloads,
      int applied,
      String now) {
    StorageClusterStatus previous =
        sc.getStatus() == null ? new StorageClusterStatus() : sc.getStatus();
    long generation =
        sc.getMetadata().getGeneration() == null ? 0 : sc.getMetadata().getGeneration();
    StorageClusterStatus s = new StorageClusterStatus();
    s.setObservedGeneration(generation);
    s.setKubernetesVersion(
        kubernetesVersion != null ? kubernetesVersion : previous.getKubernetesVersion());
    s.setAppliedObjects(outcome.ok() ? applied : null);
    if (desired != null) {
      s.setRegistration(desired.registration());
      s.setImages(usedImages(sc.getSpec(), desired));
    } else {
      s.setRegistration(previous.getRegistration());
    }
    int ctrlDesired = 0;
    int ctrlReady = 0;
    int nodesDesired = 0;
    int nodesReady = 0;
    int registered = 0;
    if (workloads != null) {
      DeploymentStatus ds =
          workloads.deployment() == null ? null : workloads.deployment().getStatus();
      ctrlDesired = sc.getSpec().getController().getReplicas();
      ctrlReady = ds == null || ds.getReadyReplicas() == null ? 0 : ds.getReadyReplicas();
      DaemonSetStatus dss =
          workloads.daemonSet() == null ? null : workloads.daemonSet().getStatus();
      nodesDesired =
          dss == null || dss.getDesiredNumberScheduled() == null
              ? 0
              : dss.getDesiredNumberScheduled();
      nodesReady = dss == null || dss.getNumberReady() == null ? 0 : dss.getNumberReady();
      s.setController(new ReplicaStatus(ctrlDesired, ctrlReady));
      registered = workloads.registeredNodes();
      s.setNodes(new NodeStatus(nodesDesired, nodesReady, registered));
      s.setPools(pools(sc.getSpec(), workloads.capacities()));
      s.setCapacity(summary(s.getPools()));
    }

    Conditions c = new Conditions(previous.getConditions(), generation, now);
    // A node plugin pod is ready before the kubelet has registered its driver; until then no
    // volume can be staged on that node, so Ready waits for the registrations too.
    boolean rolledOut =
        ctrlReady >= ctrlDesired
            && nodesDesired > 0
            && nodesReady >= nodesDesired
            && registered >= nodesDesired;
    String rollout =
        "controller "
            + ctrlReady
            + "/"
            + ctrlDesired
            + " ready, node plugin "
            + nodesReady
            + "/"
            + nodesDesired
            + " ready, "
            + registered
            + "/"
            + nodesDesired
            + " registered with the kubelet";
    if (!outcome.ok()) {
      c.set(Conditions.READY, false, outcome.reason(), outcome.message());
      c.set(Conditions.PROGRESSING, false, outcome.reason(), outcome.message());
      c.set(Conditions.DEGRADED, true, outcome.reason(), outcome.message());
    } else {
      c.set(
          Conditions.READY,
          rolledOut,
          rolledOut
              ? "Ready"
              : nodesDesired == 0
                      && workloads != null
                      && workloads.daemonSet() != null
                      && workloads.daemonSet().getStatus() != null
                  ? "NoNodes"
                  : "RollingOut",
          rollout);
      c.set(
          Conditions.PROGRESSING,
          !rolledOut,
          rolledOut ? "RolloutComplete" : "RollingOut",
          applied + " objects applied; " + rollout);
      c.set(Conditions.DEGRADED, false, "AsExpected", outcome.message() + notices(desired));
    }
    if (compatibility == null) {
      var old = Conditions.find(previous.getConditions(), Conditions.COMPATIBLE);
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
              + kubernetesVersion
              + " need");
    } else {
      c.set(Conditions.COMPATIBLE, false, "MissingApis", String.join("; ", compatibility));
    }
    s.setConditions(c.build());
    return s;
  }

  /** Notices (e.g. unqualified images) are legal choices the admin should still know about. */
  private static String notices(DesiredState desired) {
    return desired == null || desired.notices().isEmpty()
        ? ""
        : "; " + String.join("; ", desired.notices());
  }

  private static Map<String, String> usedImages(StorageClusterSpec spec, DesiredState desired) {
    Map<String, String> images = new TreeMap<>();
    List<io.fabric8.kubernetes.api.model.Container> containers = new ArrayList<>();
    containers.addAll(desired.nodeDaemonSet().getSpec().getTemplate().getSpec().getContainers());
    containers.addAll(
        desired.controllerDeployment().getSpec().getTemplate().getSpec().getContainers());
    containers.forEach(ct -> images.put(ct.getName(), ct.getImage()));
    images.putIfAbsent(Component.DRIVER.key(), desired.images().get(Component.DRIVER));
    return images;
  }

  /**
   * Per node and pool: the configured total and the available capacity the provisioner published.
   */
  static List<PoolStatus> pools(StorageClusterSpec spec, List<CSIStorageCapacity> capacities) {
    Map<String, String> poolOfClass = new HashMap<>();
    for (StorageClassSpec c : spec.getStorageClasses()) {
      poolOfClass.put(c.getName(), c.getPool());
    }
    Map<String, String> totalOfPool = new HashMap<>();
    for (PoolSpec p : spec.getPools()) {
      totalOfPool.put(p.getName(), p.getCapacity());
    }
    Map<String, PoolStatus> byNodeAndPool = new LinkedHashMap<>();
    for (CSIStorageCapacity cap : capacities) {
      String pool = poolOfClass.get(cap.getStorageClassName());
      String node = node(cap);
      if (pool == null || node == null || cap.getCapacity() == null) {
        continue;
      }
      byNodeAndPool.putIfAbsent(
          node + "/" + pool,
          new PoolStatus(node, pool, totalOfPool.get(pool), format(bytes(cap.getCapacity()))));
    }
    List<PoolStatus> out = new ArrayList<>(byNodeAndPool.values());
    out.sort(Comparator.comparing(PoolStatus::node).thenComparing(PoolStatus::pool));
    return out;
  }

  private static String node(CSIStorageCapacity cap) {
    if (cap.getNodeTopology() == null || cap.getNodeTopology().getMatchLabels() == null) {
      return null;
    }
    return cap.getNodeTopology().getMatchLabels().get(TOPOLOGY_KEY);
  }

  /** Sums over pools whose total is known; null when none is. */
  static CapacityStatus summary(List<PoolStatus> pools) {
    BigDecimal total = BigDecimal.ZERO;
    BigDecimal used = BigDecimal.ZERO;
    boolean known = false;
    for (PoolStatus p : pools) {
      if (p.total() == null) {
        continue;
      }
      known = true;
      BigDecimal t = bytes(new Quantity(p.total()));
      total = total.add(t);
      used = used.add(t.subtract(bytes(new Quantity(p.available()))).max(BigDecimal.ZERO));
    }
    return known ? new CapacityStatus(format(total), format(used)) : null;
  }

  private static BigDecimal bytes(Quantity q) {
    return q.getNumericalAmount();
  }

  /** Bytes as a binary-suffixed quantity with at most one decimal, e.g. 12.5Gi. */
  static String format(BigDecimal bytes) {
    String[] units = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    BigDecimal value = bytes;
    int unit = 0;
    BigDecimal k = BigDecimal.valueOf(1024);
    while (unit < units.length - 1 && value.compareTo(k) >= 0) {
      value = value.divide(k);
      unit++;
    }
    return value.setScale(1, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString()
        + units[unit];
  }
}

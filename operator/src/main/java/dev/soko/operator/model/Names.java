package dev.soko.operator.model;

import dev.soko.api.v1alpha1.StorageCluster;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Names and labels of everything one StorageCluster owns. Cluster-scoped names carry the
 * StorageCluster's name so several installations coexist.
 */
public record Names(String cluster, String namespace) {
  public static final String LABEL_CLUSTER = "soko.dev/storagecluster";
  public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
  public static final String MANAGER = "soko-operator";
  public static final String NODE = "node";
  public static final String CONTROLLER = "controller";

  public static Names of(StorageCluster sc) {
    return new Names(sc.getMetadata().getName(), sc.getSpec().getNamespace());
  }

  public String workload(String component) {
    return cluster + "-" + component;
  }

  public String serviceAccount(String component) {
    return cluster + "-" + component;
  }

  /** The data path's certificate authority (Secret ca.crt, ca.key; never mounted). */
  public String dataCa() {
    return cluster + "-data-ca";
  }

  /**
   * The data path's certificate, key and trusted CAs of one component (a kubernetes.io/tls Secret).
   */
  public String dataTls(String component) {
    return cluster + "-" + component + "-data-tls";
  }

  /** Name of a cluster-scoped RBAC object: "soko:NAME:ROLE". */
  public String clusterRole(String role) {
    return "soko:" + cluster + ":" + role;
  }

  public String snapshotClass(String fromSpec) {
    return fromSpec != null ? fromSpec : cluster + "-snapshots";
  }

  /** Labels on every owned object; the operator selects its objects by {@link #LABEL_CLUSTER}. */
  public Map<String, String> labels(String component) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("app.kubernetes.io/name", "soko");
    labels.put("app.kubernetes.io/instance", cluster);
    labels.put("app.kubernetes.io/component", component);
    labels.put(LABEL_MANAGED_BY, MANAGER);
    labels.put(LABEL_CLUSTER, cluster);
    return labels;
  }

  /**
   * The pod selector of a workload: stable, never includes labels that may change. In a fixed order
   * (not {@code Map.of}, whose order changes from one JVM to the next), so that two renders print
   * the same text.
   */
  public Map<String, String> selector(String component) {
    Map<String, String> selector = new LinkedHashMap<>();
    selector.put("app.kubernetes.io/instance", cluster);
    selector.put("app.kubernetes.io/component", component);
    return selector;
  }
}

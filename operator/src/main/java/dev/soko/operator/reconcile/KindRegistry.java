package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The one list of kinds the operator touches: what it creates (with apply and delete order and the
 * API that must be served for an optional kind), what it only observes, and the verbs it uses on
 * each. Informers, apply order, pruning, the served-API checks and the RBAC test read it.
 */
final class KindRegistry {
  /** The served-API gate of the StorageNode CRD. */
  static final String STORAGE_NODES =
      StorageCluster.GROUP + "/" + StorageCluster.VERSION + "/storagenodes";

  /** Label the external-provisioner puts on its CSIStorageCapacity objects. */
  static final String DRIVER_NAME_LABEL = "csi.storage.k8s.io/drivername";

  private static final List<String> MANAGE =
      List.of("get", "list", "watch", "create", "patch", "delete");
  private static final List<String> WATCH = List.of("get", "list", "watch");

  static final Kind NAMESPACE =
      owned(Namespace.class, "v1", "Namespace", "namespaces", false, 0, 100, Kind.Mapping.BY_LABEL);
  static final Kind SERVICE_ACCOUNT =
      owned(
          ServiceAccount.class,
          "v1",
          "ServiceAccount",
          "serviceaccounts",
          true,
          1,
          80,
          Kind.Mapping.BY_LABEL);
  static final Kind CLUSTER_ROLE =
      owned(
          ClusterRole.class,
          "rbac.authorization.k8s.io/v1",
          "ClusterRole",
          "clusterroles",
          false,
          2,
          70,
          Kind.Mapping.BY_LABEL);
  static final Kind CLUSTER_ROLE_BINDING =
      owned(
          ClusterRoleBinding.class,
          "rbac.authorization.k8s.io/v1",
          "ClusterRoleBinding",
          "clusterrolebindings",
          false,
          3,
          60,
          Kind.Mapping.BY_LABEL);
  static final Kind ROLE =
      owned(
          Role.class,
          "rbac.authorization.k8s.io/v1",
          "Role",
          "roles",
          true,
          2,
          50,
          Kind.Mapping.BY_LABEL);
  static final Kind ROLE_BINDING =
      owned(
          RoleBinding.class,
          "rbac.authorization.k8s.io/v1",
          "RoleBinding",
          "rolebindings",
          true,
          3,
          40,
          Kind.Mapping.BY_LABEL);
  static final Kind CSI_DRIVER =
      owned(
          CSIDriver.class,
          "storage.k8s.io/v1",
          "CSIDriver",
          "csidrivers",
          false,
          4,
          30,
          Kind.Mapping.BY_LABEL_OR_FOREIGN);
  static final Kind DEPLOYMENT =
      owned(
          Deployment.class,
          "apps/v1",
          "Deployment",
          "deployments",
          true,
          5,
          10,
          Kind.Mapping.BY_LABEL);
  static final Kind DAEMON_SET =
      owned(
          DaemonSet.class, "apps/v1", "DaemonSet", "daemonsets", true, 5, 0, Kind.Mapping.BY_LABEL);
  static final Kind STORAGE_CLASS =
      owned(
          StorageClass.class,
          "storage.k8s.io/v1",
          "StorageClass",
          "storageclasses",
          false,
          6,
          20,
          Kind.Mapping.BY_LABEL_OR_FOREIGN);
  static final Kind VOLUME_SNAPSHOT_CLASS =
      new Kind(
          GenericKubernetesResource.class,
          "snapshot.storage.k8s.io/v1",
          "VolumeSnapshotClass",
          "volumesnapshotclasses",
          false,
          ClusterFacts.VOLUME_SNAPSHOT_CLASSES,
          Kind.Use.OWNED,
          6,
          20,
          true,
          null,
          Kind.Mapping.BY_LABEL_OR_FOREIGN,
          MANAGE,
          null);

  static final Kind CSI_NODE =
      observed(
          CSINode.class, "storage.k8s.io/v1", "CSINode", "csinodes", false, null, Kind.Mapping.ALL);
  static final Kind CSI_STORAGE_CAPACITY =
      observed(
          CSIStorageCapacity.class,
          "storage.k8s.io/v1",
          "CSIStorageCapacity",
          "csistoragecapacities",
          true,
          DRIVER_NAME_LABEL,
          Kind.Mapping.BY_DRIVER_LABEL);
  static final Kind POD =
      observed(Pod.class, "v1", "Pod", "pods", true, Names.LABEL_CLUSTER, Kind.Mapping.BY_LABEL);
  // The node drivers' pool reports, for status.poolSummary and status.pools. Optional: a chart
  // upgrade does not upgrade CRDs, so an operator may meet a cluster without this one. Deleted
  // when their Node or StorageCluster is gone (StorageNodeReports). A rewrite that only refreshes
  // readings (every minute per node) reconciles nothing: the status takes those up on the next
  // reconcile, at the latest when a report would go stale.
  static final Kind STORAGE_NODE =
      new Kind(
          StorageNode.class,
          StorageCluster.GROUP + "/" + StorageCluster.VERSION,
          "StorageNode",
          "storagenodes",
          false,
          STORAGE_NODES,
          Kind.Use.OBSERVED,
          -1,
          -1,
          true,
          StorageNode.LABEL_CLUSTER,
          Kind.Mapping.BY_LABEL,
          List.of("get", "list", "watch", "delete"),
          (now, before) ->
              StorageNodeReports.changesStatus((StorageNode) now, (StorageNode) before));
  // Nodes, PersistentVolumes and claims: listed on uninstall (PV protection) and by spec.nodeLoss,
  // whose informers (nodeloss.NodeLossSources) slim what they cache; it marks and deletes the PVs
  // and claims of deleted nodes.
  static final Kind PERSISTENT_VOLUME =
      notInformed(
          PersistentVolume.class,
          "v1",
          "PersistentVolume",
          "persistentvolumes",
          false,
          List.of("get", "list", "watch", "patch", "delete"));
  static final Kind PERSISTENT_VOLUME_CLAIM =
      notInformed(
          PersistentVolumeClaim.class,
          "v1",
          "PersistentVolumeClaim",
          "persistentvolumeclaims",
          true,
          List.of("get", "delete"));
  static final Kind NODE =
      notInformed(Node.class, "v1", "Node", "nodes", false, List.of("get", "list", "watch"));
  static final Kind EVENT =
      new Kind(
          Event.class,
          "v1",
          "Event",
          "events",
          true,
          null,
          Kind.Use.OBSERVED,
          -1,
          -1,
          false,
          null,
          Kind.Mapping.NONE,
          List.of("create"),
          null);
  static final Kind STORAGE_CLUSTER =
      new Kind(
          StorageCluster.class,
          StorageCluster.GROUP + "/" + StorageCluster.VERSION,
          "StorageCluster",
          "storageclusters",
          false,
          null,
          Kind.Use.PRIMARY,
          -1,
          -1,
          false,
          null,
          Kind.Mapping.NONE,
          List.of("get", "list", "watch", "patch", "update"),
          null);

  /** Every kind, owned ones in apply order. */
  static final List<Kind> ALL =
      List.of(
          NAMESPACE,
          SERVICE_ACCOUNT,
          CLUSTER_ROLE,
          ROLE,
          CLUSTER_ROLE_BINDING,
          ROLE_BINDING,
          CSI_DRIVER,
          DEPLOYMENT,
          DAEMON_SET,
          STORAGE_CLASS,
          VOLUME_SNAPSHOT_CLASS,
          CSI_NODE,
          CSI_STORAGE_CAPACITY,
          POD,
          STORAGE_NODE,
          PERSISTENT_VOLUME,
          PERSISTENT_VOLUME_CLAIM,
          NODE,
          EVENT,
          STORAGE_CLUSTER);

  private KindRegistry() {}

  static List<Kind> owned() {
    return ALL.stream().filter(k -> k.use() == Kind.Use.OWNED).toList();
  }

  /** Owned kinds in uninstall order (workloads before their RBAC, namespace last). */
  static List<Kind> deleteOrder() {
    return owned().stream().sorted(Comparator.comparingInt(Kind::deleteRank)).toList();
  }

  static List<Kind> informers() {
    return ALL.stream().filter(Kind::informer).toList();
  }

  /** The served-API gates of optional kinds, checked through discovery. */
  static List<String> gates() {
    return ALL.stream().map(Kind::gate).filter(Objects::nonNull).distinct().toList();
  }

  /** The registry's entry for an object, by apiVersion and kind (typed or generic). */
  static Kind of(HasMetadata o) {
    return find(o.getApiVersion(), o.getKind())
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "not a kind the operator knows: " + o.getApiVersion() + " " + o.getKind()));
  }

  static Optional<Kind> find(String apiVersion, String kind) {
    return ALL.stream()
        .filter(k -> k.apiVersion().equals(apiVersion) && k.kind().equals(kind))
        .findFirst();
  }

  /**
   * Objects sorted by their kind's apply rank; stable, so the model's order within a rank stays.
   */
  static List<HasMetadata> inApplyOrder(List<HasMetadata> objects) {
    return objects.stream().sorted(Comparator.comparingInt(o -> of(o).applyRank())).toList();
  }

  private static Kind owned(
      Class<? extends HasMetadata> type,
      String apiVersion,
      String kind,
      String plural,
      boolean namespaced,
      int applyRank,
      int deleteRank,
      Kind.Mapping mapping) {
    return new Kind(
        type,
        apiVersion,
        kind,
        plural,
        namespaced,
        null,
        Kind.Use.OWNED,
        applyRank,
        deleteRank,
        true,
        mapping == Kind.Mapping.BY_LABEL ? Names.LABEL_CLUSTER : null,
        mapping,
        MANAGE,
        null);
  }

  private static Kind notInformed(
      Class<? extends HasMetadata> type,
      String apiVersion,
      String kind,
      String plural,
      boolean namespaced,
      List<String> verbs) {
    return new Kind(
        type,
        apiVersion,
        kind,
        plural,
        namespaced,
        null,
        Kind.Use.OBSERVED,
        -1,
        -1,
        false,
        null,
        Kind.Mapping.NONE,
        verbs,
        null);
  }

  private static Kind observed(
      Class<? extends HasMetadata> type,
      String apiVersion,
      String kind,
      String plural,
      boolean namespaced,
      String labelSelector,
      Kind.Mapping mapping) {
    return new Kind(
        type,
        apiVersion,
        kind,
        plural,
        namespaced,
        null,
        Kind.Use.OBSERVED,
        -1,
        -1,
        true,
        labelSelector,
        mapping,
        WATCH,
        null);
  }
}

package dev.soko.operator.reconcile.kinds;

import static dev.soko.operator.reconcile.kinds.KindTemplates.IN_NAMESPACES;
import static dev.soko.operator.reconcile.kinds.KindTemplates.MANAGE;
import static dev.soko.operator.reconcile.kinds.KindTemplates.SOKOS;
import static dev.soko.operator.reconcile.kinds.KindTemplates.WATCH;
import static dev.soko.operator.reconcile.kinds.KindTemplates.collected;
import static dev.soko.operator.reconcile.kinds.KindTemplates.observed;
import static dev.soko.operator.reconcile.kinds.KindTemplates.owned;
import static dev.soko.operator.reconcile.kinds.KindTemplates.snapshotClass;

import dev.soko.api.v1alpha1.NodeRequest;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.SnapshotMetadata;
import dev.soko.operator.nodeloss.Slim;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
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
 * each, and what the support bundle collects of each (some kinds only it reads). Informers, apply
 * order, pruning, the served-API checks, the RBAC test and the support bundle read it. It is long
 * because it is that table, one entry per kind with the reason for its settings; split, it would be
 * the several lists it exists to replace. How an entry is made from its few settings is {@link
 * KindTemplates}'.
 */
public final class KindRegistry {
  /** The served-API gate of the StorageNode CRD. */
  static final String STORAGE_NODES =
      StorageCluster.GROUP + "/" + StorageCluster.VERSION + "/storagenodes";

  /** Label the external-provisioner puts on its CSIStorageCapacity objects. */
  static final String DRIVER_NAME_LABEL = "csi.storage.k8s.io/drivername";

  public static final Kind NAMESPACE = owned(Namespace.class, 0, 100, Kind.Mapping.BY_LABEL, null);
  static final Kind SERVICE_ACCOUNT =
      owned(ServiceAccount.class, 1, 80, Kind.Mapping.BY_LABEL, IN_NAMESPACES);

  /**
   * The data path's CA and certificates ({@code datatls.DataTlsCertificates}) and the snapshot
   * metadata sidecar's TLS Secret ({@link SnapshotMetadata}). Watched by Soko's label only, so the
   * cache holds these Secrets and no others; before the workloads, which mount them; never in the
   * support bundle, as they hold private keys.
   */
  public static final Kind SECRET = owned(Secret.class, 1, 85, Kind.Mapping.BY_LABEL, null);

  static final Kind CLUSTER_ROLE = owned(ClusterRole.class, 2, 70, Kind.Mapping.BY_LABEL, SOKOS);
  static final Kind CLUSTER_ROLE_BINDING =
      owned(ClusterRoleBinding.class, 3, 60, Kind.Mapping.BY_LABEL, SOKOS);
  static final Kind ROLE = owned(Role.class, 2, 50, Kind.Mapping.BY_LABEL, IN_NAMESPACES);
  static final Kind ROLE_BINDING =
      owned(RoleBinding.class, 3, 40, Kind.Mapping.BY_LABEL, IN_NAMESPACES);
  public static final Kind CSI_DRIVER =
      owned(
          CSIDriver.class,
          4,
          30,
          Kind.Mapping.BY_LABEL_OR_FOREIGN,
          Kind.Bundle.ofDrivers(d -> d.getMetadata().getName()));
  public static final Kind DEPLOYMENT =
      owned(Deployment.class, 5, 10, Kind.Mapping.BY_LABEL, IN_NAMESPACES);
  public static final Kind DAEMON_SET =
      owned(DaemonSet.class, 5, 0, Kind.Mapping.BY_LABEL, IN_NAMESPACES);
  public static final Kind STORAGE_CLASS =
      owned(
          StorageClass.class,
          6,
          20,
          Kind.Mapping.BY_LABEL_OR_FOREIGN,
          Kind.Bundle.ofDrivers(c -> ((StorageClass) c).getProvisioner()));
  public static final Kind VOLUME_SNAPSHOT_CLASS =
      snapshotClass(
          "snapshot.storage.k8s.io/v1",
          "VolumeSnapshotClass",
          "volumesnapshotclasses",
          ClusterFacts.VOLUME_SNAPSHOT_CLASSES);

  /**
   * The group snapshot class, made with the VolumeSnapshotClass where group snapshots run ({@link
   * dev.soko.operator.model.DesiredState#groupSnapshotsEnabled}). Its CRDs are installed apart from
   * the snapshot ones, so its API is a gate of its own.
   */
  public static final Kind VOLUME_GROUP_SNAPSHOT_CLASS =
      snapshotClass(
          "groupsnapshot.storage.k8s.io/v1",
          "VolumeGroupSnapshotClass",
          "volumegroupsnapshotclasses",
          ClusterFacts.VOLUME_GROUP_SNAPSHOT_CLASSES);

  /** The snapshot metadata sidecar's Service, in front of the controller pods. */
  static final Kind SERVICE = owned(Service.class, 5, 12, Kind.Mapping.BY_LABEL, IN_NAMESPACES);

  /**
   * The object that tells backup applications where the snapshot metadata sidecar is (named after
   * the driver, cluster-scoped). Its CRD is an add-on, so its API is a gate of its own.
   */
  public static final Kind SNAPSHOT_METADATA_SERVICE =
      new Kind(
          GenericKubernetesResource.class,
          "cbt.storage.k8s.io/v1beta1",
          "SnapshotMetadataService",
          "snapshotmetadataservices",
          false,
          SnapshotMetadata.API,
          Kind.Use.OWNED,
          6,
          25,
          Kind.Watch.of(Names.LABEL_CLUSTER, Kind.Mapping.BY_LABEL),
          MANAGE,
          Kind.Bundle.ofDrivers(o -> o.getMetadata().getName()));

  public static final Kind CSI_NODE =
      observed(
          CSINode.class,
          Kind.Watch.of(null, Kind.Mapping.ALL),
          WATCH,
          // Every CSINode: one that does not list a driver says as much as one that does.
          Kind.Bundle.of(Kind.Bundle.Scope.ALL));
  public static final Kind CSI_STORAGE_CAPACITY =
      observed(
          CSIStorageCapacity.class,
          Kind.Watch.of(DRIVER_NAME_LABEL, Kind.Mapping.BY_DRIVER_LABEL),
          WATCH,
          null);

  /** One per node: the cache keeps only what readiness reads ({@link CachedPod}). */
  public static final Kind POD =
      observed(
          Pod.class,
          new Kind.Watch(
              Names.LABEL_CLUSTER,
              Kind.Mapping.BY_LABEL,
              Kind.Reconciles.ANY_CHANGE,
              p -> CachedPod.of((Pod) p),
              null),
          WATCH,
          IN_NAMESPACES);

  /**
   * The node drivers' pool reports, for status.poolSummary and status.pools. Optional: a chart
   * upgrade does not upgrade CRDs, so an operator may meet a cluster without this one. Deleted when
   * their Node or StorageCluster is gone ({@code apply.ReportCleanup}). A rewrite that only
   * refreshes readings (every minute per node) reconciles nothing: the status takes those up on the
   * next reconcile, at the latest when a report would go stale.
   */
  public static final Kind STORAGE_NODE =
      new Kind(
          StorageNode.class,
          HasMetadata.getApiVersion(StorageNode.class),
          HasMetadata.getKind(StorageNode.class),
          HasMetadata.getPlural(StorageNode.class),
          false,
          STORAGE_NODES,
          Kind.Use.OBSERVED,
          -1,
          -1,
          new Kind.Watch(
              StorageNode.LABEL_CLUSTER,
              Kind.Mapping.BY_LABEL,
              Kind.Reconciles.REPORT_CHANGE,
              null,
              null),
          List.of("get", "list", "watch", "delete"),
          Kind.Bundle.of(Kind.Bundle.Scope.ALL));

  /**
   * Every Node, kept as a name: spec.nodeLoss notices a Node that is gone; a Node that arrives or
   * goes reconciles every StorageCluster.
   */
  public static final Kind NODE =
      observed(
          Node.class,
          new Kind.Watch(
              null,
              Kind.Mapping.ALL,
              Kind.Reconciles.ADD_OR_DELETE,
              n -> Slim.node((Node) n),
              null),
          WATCH,
          null);

  /**
   * Every PersistentVolume, kept with what node-loss and the uninstall check read, indexed by CSI
   * driver. spec.nodeLoss marks and deletes the PVs of lost Nodes; uninstall refuses while the
   * driver has any. An arrival or a deletion reconciles the StorageClusters of its driver: a PV can
   * reach the cache after its Node's loss was reconciled (created as the Node went, restored from a
   * backup), and a report clears when someone deletes an orphan by hand. Binding changes nothing
   * here, so updates do not reconcile.
   */
  public static final Kind PERSISTENT_VOLUME =
      observed(
          PersistentVolume.class,
          new Kind.Watch(
              null,
              Kind.Mapping.BY_VOLUME_DRIVER,
              Kind.Reconciles.ADD_OR_DELETE,
              pv -> Slim.volume((PersistentVolume) pv),
              pv -> Slim.driver((PersistentVolume) pv)),
          List.of("get", "list", "watch", "patch", "delete"),
          Kind.Bundle.ofDrivers(pv -> Slim.driver((PersistentVolume) pv)));

  /**
   * Pre-provisioned VolumeSnapshotContents that no node has taken yet: the driver on the node that
   * holds a content's snapshot labels it {@value SnapshotContents#MANAGED_BY} (docs/snapshots.md),
   * and one that stays unlabelled gets a Warning ({@code apply.UnclaimedSnapshots}). Watched
   * without that label only, so the cache holds (nearly) nothing: a dynamic content carries the
   * label from its creation and an imported one loses its place here within a second of its node
   * seeing it. A dynamic content whose volume's Node was gone when it was made stays unlabelled:
   * spec.nodeLoss finds it here ({@code nodeloss.LostSnapshots}), lists the contents labelled with
   * gone Nodes by label, and with policy Delete releases both (a patch that removes a finalizer).
   * The snapshot API comes as one set of CRDs, so the snapshot classes' gate is this kind's too.
   */
  public static final Kind VOLUME_SNAPSHOT_CONTENT =
      new Kind(
          GenericKubernetesResource.class,
          "snapshot.storage.k8s.io/v1",
          "VolumeSnapshotContent",
          "volumesnapshotcontents",
          false,
          ClusterFacts.VOLUME_SNAPSHOT_CLASSES,
          Kind.Use.OBSERVED,
          -1,
          -1,
          Kind.Watch.of("!" + SnapshotContents.MANAGED_BY, Kind.Mapping.BY_SNAPSHOT_DRIVER),
          List.of("get", "list", "watch", "patch"),
          Kind.Bundle.ofDrivers(SnapshotContents::driver));

  /** Claims of lost Nodes' PVs, deleted by spec.nodeLoss by name: not watched. */
  static final Kind PERSISTENT_VOLUME_CLAIM =
      observed(
          PersistentVolumeClaim.class,
          null,
          List.of("get", "delete"),
          Kind.Bundle.of(Kind.Bundle.Scope.CLAIMS_OF_VOLUMES));

  static final Kind EVENT = observed(Event.class, null, List.of("create"), IN_NAMESPACES);
  public static final Kind STORAGE_CLUSTER =
      new Kind(
          StorageCluster.class,
          HasMetadata.getApiVersion(StorageCluster.class),
          HasMetadata.getKind(StorageCluster.class),
          HasMetadata.getPlural(StorageCluster.class),
          false,
          null,
          Kind.Use.PRIMARY,
          -1,
          -1,
          null,
          List.of("get", "list", "watch", "patch", "update"),
          Kind.Bundle.of(Kind.Bundle.Scope.ALL));

  /**
   * The group snapshots' contents, for the support bundle only. Installed with the group snapshot
   * classes, so their gate is that class's.
   */
  public static final Kind VOLUME_GROUP_SNAPSHOT_CONTENT =
      new Kind(
          GenericKubernetesResource.class,
          "groupsnapshot.storage.k8s.io/v1",
          "VolumeGroupSnapshotContent",
          "volumegroupsnapshotcontents",
          false,
          ClusterFacts.VOLUME_GROUP_SNAPSHOT_CLASSES,
          Kind.Use.COLLECTED,
          -1,
          -1,
          null,
          List.of(),
          Kind.Bundle.ofDrivers(SnapshotContents::driver));

  /** The controller → node path's requests and the nodes' answers, for the support bundle. */
  public static final Kind NODE_REQUEST = collected(NodeRequest.class);

  public static final Kind CONFIG_MAP = collected(ConfigMap.class);

  /** The operator's leader-election lease, among others, for the support bundle. */
  public static final Kind LEASE = collected(Lease.class);

  /** Every kind, owned ones in apply order. */
  static final List<Kind> ALL =
      List.of(
          NAMESPACE,
          SERVICE_ACCOUNT,
          SECRET,
          CLUSTER_ROLE,
          ROLE,
          CLUSTER_ROLE_BINDING,
          ROLE_BINDING,
          CSI_DRIVER,
          DEPLOYMENT,
          DAEMON_SET,
          STORAGE_CLASS,
          VOLUME_SNAPSHOT_CLASS,
          VOLUME_GROUP_SNAPSHOT_CLASS,
          SERVICE,
          SNAPSHOT_METADATA_SERVICE,
          CSI_NODE,
          CSI_STORAGE_CAPACITY,
          POD,
          STORAGE_NODE,
          PERSISTENT_VOLUME,
          PERSISTENT_VOLUME_CLAIM,
          VOLUME_SNAPSHOT_CONTENT,
          NODE,
          EVENT,
          STORAGE_CLUSTER,
          VOLUME_GROUP_SNAPSHOT_CONTENT,
          NODE_REQUEST,
          CONFIG_MAP,
          LEASE);

  private KindRegistry() {}

  static List<Kind> ownedKinds() {
    return ALL.stream().filter(k -> k.use() == Kind.Use.OWNED).toList();
  }

  /**
   * The kinds whose pods run Soko's code and sidecars: uninstall deletes them first and the rest
   * once their pods have ended.
   */
  public static List<Kind> workloads() {
    return List.of(DAEMON_SET, DEPLOYMENT);
  }

  /** Owned kinds in uninstall order (workloads before their RBAC, namespace last). */
  public static List<Kind> deleteOrder() {
    return ownedKinds().stream().sorted(Comparator.comparingInt(Kind::deleteRank)).toList();
  }

  /** The kinds the support bundle collects, in the registry's order. */
  public static List<Kind> bundled() {
    return ALL.stream().filter(k -> k.bundle() != null).toList();
  }

  static List<Kind> informers() {
    return ALL.stream().filter(Kind::informer).toList();
  }

  /** The served-API gates of optional kinds, checked through discovery. */
  public static List<String> gates() {
    return ALL.stream().map(Kind::gate).filter(Objects::nonNull).distinct().toList();
  }

  /** The registry's entry for an object, by apiVersion and kind (typed or generic). */
  public static Kind of(HasMetadata o) {
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
  public static List<HasMetadata> inApplyOrder(List<HasMetadata> objects) {
    return objects.stream().sorted(Comparator.comparingInt(o -> of(o).applyRank())).toList();
  }
}

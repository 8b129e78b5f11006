package dev.soko.operator.model;

import dev.soko.api.v1alpha1.ImageOverrides;
import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything one StorageCluster should create, as fabric8 objects: a pure function of the
 * StorageCluster, the versions table and the cluster facts. Used by the reconciler's dependents and
 * by {@code render}.
 *
 * @param registration how the driver registers with the kubelet (spec.driver.registration,
 *     defaulted)
 * @param namespace null when the namespace exists and is not Soko's ({@link OperandNamespace})
 * @param snapshotClass null when snapshots are off
 * @param groupSnapshotClass null when group snapshots are off ({@link #groupSnapshotsEnabled})
 * @param changedBlockTracking whether the snapshot metadata sidecar runs, and why not
 * @param snapshotMetadata its objects besides the container ({@link SnapshotMetadata#objects});
 *     empty when it does not run, without its Secret and SnapshotMetadataService offline
 */
public record DesiredState(
    Names names,
    Registration registration,
    ResolvedImages images,
    Namespace namespace,
    List<HasMetadata> rbac,
    CSIDriver csiDriver,
    DaemonSet nodeDaemonSet,
    Deployment controllerDeployment,
    List<StorageClass> storageClasses,
    GenericKubernetesResource snapshotClass,
    GenericKubernetesResource groupSnapshotClass,
    List<String> notices,
    SnapshotMetadata.Verdict changedBlockTracking,
    List<HasMetadata> snapshotMetadata) {

  /**
   * The offline render ({@code soko-operator render}): no CA, so the snapshot metadata sidecar's
   * Secret and SnapshotMetadataService are left out ({@link ServingCertificates#NONE}).
   */
  public static DesiredState of(StorageCluster sc, VersionsTable table, ClusterFacts facts) {
    return of(sc, table, facts, ServingCertificates.NONE);
  }

  /**
   * @param certificates the operator's CA, for the snapshot metadata sidecar's serving certificate
   */
  public static DesiredState of(
      StorageCluster sc,
      VersionsTable table,
      ClusterFacts facts,
      ServingCertificates certificates) {
    StorageClusterSpec spec = sc.getSpec();
    Names n = Names.of(sc);
    ResolvedImages images = ResolvedImages.resolve(spec, table, facts.version());
    VersionsTable.Row row = table.rowFor(facts.version());
    boolean snapshots = snapshotsEnabled(spec, facts);
    boolean groups = groupSnapshotsEnabled(spec, facts, row, images);
    boolean capacity = Boolean.TRUE.equals(spec.getFeatures().getCapacityTracking());
    boolean health =
        CONTROLLER_REPORTS_VOLUME_CONDITION
            && Boolean.TRUE.equals(spec.getFeatures().getVolumeHealthMonitor());
    SnapshotMetadata.Verdict cbt = SnapshotMetadata.verdict(spec, facts, row, images, snapshots);
    return new DesiredState(
        n,
        KubeletRegistration.of(spec),
        images,
        facts.foreignNamespace() == null ? OperandNamespace.build(n) : null,
        Rbac.objects(n, snapshots, groups, capacity, health),
        StorageObjects.csiDriver(n, spec),
        NodeDaemonSet.build(n, spec, images, row, snapshots, DataTls.rendered(images)),
        ControllerDeployment.build(
            n, spec, images, row, health, groups, DataTls.rendered(images), cbt.runs()),
        StorageObjects.storageClasses(n, spec, facts.foreignDefaultStorageClass()),
        snapshots
            ? StorageObjects.snapshotClass(n, spec, facts.foreignDefaultSnapshotClass())
            : null,
        groups
            ? StorageObjects.groupSnapshotClass(n, spec, facts.foreignDefaultGroupSnapshotClass())
            : null,
        notices(spec, images, facts),
        cbt,
        cbt.runs() ? SnapshotMetadata.objects(n, spec, certificates) : List.of());
  }

  /** What the admin asked for but is not done as asked, for the status; empty when none. */
  private static List<String> notices(
      StorageClusterSpec spec, ResolvedImages images, ClusterFacts facts) {
    List<String> out = new ArrayList<>();
    if (images.registry() == null) {
      out.add(UNQUALIFIED_IMAGES);
    }
    if (facts.foreignNamespace() != null) {
      String namespace = OperandNamespace.notice(facts.foreignNamespace());
      if (namespace != null) {
        out.add(namespace);
      }
    }
    ImageOverrides o = spec.getImages() == null ? null : spec.getImages().getOverrides();
    if (KubeletRegistration.of(spec) == Registration.BuiltIn
        && o != null
        && (isSet(o.getRegistrar()) || isSet(o.getLivenessProbe()))) {
      out.add(REGISTRATION_OVERRIDES_UNUSED);
    }
    if (!CONTROLLER_REPORTS_VOLUME_CONDITION
        && Boolean.TRUE.equals(spec.getFeatures().getVolumeHealthMonitor())) {
      out.add(HEALTH_MONITOR_IGNORED);
    }
    return List.copyOf(out);
  }

  /**
   * Whether the controller-mode driver advertises LIST_VOLUMES or GET_VOLUME with VOLUME_CONDITION,
   * which csi-external-health-monitor-controller requires (it exits otherwise). It advertises
   * EXPAND_VOLUME only (driver/.../csi/ClusterControllerService.java): pools live on nodes.
   */
  static final boolean CONTROLLER_REPORTS_VOLUME_CONDITION = false;

  static final String UNQUALIFIED_IMAGES =
      "images have no registry (neither spec.images.registry nor the operator's --image-registry"
          + " is set), so the container runtime resolves them with its own default";

  static final String REGISTRATION_OVERRIDES_UNUSED =
      "images.overrides.registrar and images.overrides.livenessProbe are not used: with"
          + " driver.registration BuiltIn the driver registers with the kubelet and serves its"
          + " liveness endpoint itself";

  static final String HEALTH_MONITOR_IGNORED =
      "features.volumeHealthMonitor is ignored: the controller-mode driver cannot report volume"
          + " conditions (pools live on nodes); kubelet reports them from the node driver when its"
          + " CSIVolumeHealth feature gate is on";

  /** Snapshots run only when asked for and when the cluster serves the snapshot API. */
  public static boolean snapshotsEnabled(StorageClusterSpec spec, ClusterFacts facts) {
    return Boolean.TRUE.equals(spec.getSnapshots().getEnabled())
        && facts.serves(ClusterFacts.VOLUME_SNAPSHOT_CLASSES);
  }

  /**
   * Group snapshots run with snapshots, on a row whose snapshotter serves the v1 group API, when
   * the cluster serves that API (the group CRDs v1) and the driver is a release that serves groups
   * through the controller ({@link DriverRelease#GROUP_SNAPSHOTS}): then the controller pod runs
   * csi-group-snapshotter and a VolumeGroupSnapshotClass is made.
   */
  public static boolean groupSnapshotsEnabled(
      StorageClusterSpec spec, ClusterFacts facts, VersionsTable.Row row, ResolvedImages images) {
    return snapshotsEnabled(spec, facts)
        && row.groupSnapshots()
        && facts.servesGroupSnapshots()
        && DriverRelease.of(images).has(DriverRelease.GROUP_SNAPSHOTS);
  }

  private static boolean isSet(String value) {
    return value != null && !value.isBlank();
  }

  /** All objects in apply order: namespace (when Soko's), RBAC, CSIDriver, workloads, classes. */
  public List<HasMetadata> all() {
    List<HasMetadata> out = new ArrayList<>();
    if (namespace != null) {
      out.add(namespace);
    }
    out.addAll(rbac);
    out.addAll(snapshotMetadata);
    out.add(csiDriver);
    out.add(controllerDeployment);
    out.add(nodeDaemonSet);
    out.addAll(storageClasses);
    if (snapshotClass != null) {
      out.add(snapshotClass);
    }
    if (groupSnapshotClass != null) {
      out.add(groupSnapshotClass);
    }
    return out;
  }
}

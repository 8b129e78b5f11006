package dev.soko.operator.model;

import dev.soko.api.v1alpha1.SnapshotSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** CSIDriver, StorageClasses, the VolumeSnapshotClass and the VolumeGroupSnapshotClass. */
final class StorageObjects {
  static final String VELERO_CLASS_LABEL = "velero.io/csi-volumesnapshot-class";
  static final String DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";
  static final String DEFAULT_SNAPSHOT_CLASS_ANNOTATION =
      "snapshot.storage.kubernetes.io/is-default-class";
  static final String DEFAULT_GROUP_SNAPSHOT_CLASS_ANNOTATION =
      "groupsnapshot.storage.kubernetes.io/is-default-class";

  /**
   * The label through which csi-snapshotter with --node-deployment sees contents and, for groups,
   * classes: only those whose value is its NODE_NAME (external-snapshotter pkg/utils/util.go,
   * cmd/csi-snapshotter/main.go @v8.7.0).
   */
  static final String MANAGED_BY_LABEL = "snapshot.storage.kubernetes.io/managed-by";

  /** The driver's own key for the pool; {@link EncryptedClasses} adds those of encryption. */
  static final String POOL_PARAMETER = "pool";

  /**
   * The filesystem goes in the reserved key, not the driver's "fsType": the external-provisioner
   * strips it from the parameters and puts it in every call's volume capability (create, stage,
   * publish) and in the PV's spec.csi.fsType, so kubelet and {@code kubectl get pv} see it too; the
   * driver refuses a capability whose fs type differs from the volume's. A BtrfsSubvolume pool's
   * classes carry btrfs, the only type it serves.
   */
  static final String FSTYPE_PARAMETER = "csi.storage.k8s.io/fstype";

  private StorageObjects() {}

  static CSIDriver csiDriver(Names n, StorageClusterSpec spec) {
    return new CSIDriverBuilder()
        .withMetadata(Rbac.meta(n, spec.getDriver().getName(), null, "driver"))
        .withNewSpec()
        .withAttachRequired(false)
        .withPodInfoOnMount(true)
        .withStorageCapacity(Boolean.TRUE.equals(spec.getFeatures().getCapacityTracking()))
        .withFsGroupPolicy("File")
        .withVolumeLifecycleModes("Persistent")
        .endSpec()
        .build();
  }

  /**
   * One StorageClass per entry. The default annotation is set only when asked for and no class
   * outside this StorageCluster is already the default ({@code foreignDefault} is its name).
   */
  static List<StorageClass> storageClasses(
      Names n, StorageClusterSpec spec, String foreignDefault) {
    return spec.getStorageClasses().stream()
        .map(sc -> storageClass(n, spec, sc, foreignDefault == null))
        .toList();
  }

  private static StorageClass storageClass(
      Names n, StorageClusterSpec spec, StorageClassSpec sc, boolean mayBeDefault) {
    ObjectMeta meta = Rbac.meta(n, sc.getName(), null, "storageclass");
    if (Boolean.TRUE.equals(sc.getDefaultClass()) && mayBeDefault) {
      meta.setAnnotations(Map.of(DEFAULT_CLASS_ANNOTATION, "true"));
    }
    Map<String, String> parameters = new LinkedHashMap<>();
    parameters.put(POOL_PARAMETER, sc.getPool());
    parameters.put(FSTYPE_PARAMETER, PoolBackends.fsTypeOf(sc, spec).name());
    parameters.putAll(EncryptedClasses.parameters(sc));
    return new StorageClassBuilder()
        .withMetadata(meta)
        .withProvisioner(spec.getDriver().getName())
        .withParameters(parameters)
        .withReclaimPolicy(sc.getReclaimPolicy().name())
        .withVolumeBindingMode(sc.getVolumeBindingMode().name())
        .withAllowVolumeExpansion(sc.getAllowVolumeExpansion())
        .withMountOptions(sc.getMountOptions())
        .build();
  }

  /**
   * The VolumeSnapshotClass; labelled {@value #VELERO_CLASS_LABEL} when {@code
   * spec.snapshots.velero} asks, the label through which Velero chooses a driver's class.
   */
  static GenericKubernetesResource snapshotClass(
      Names n, StorageClusterSpec spec, String foreignDefault) {
    GenericKubernetesResource c =
        snapshotClassOfKind(
            n,
            spec,
            foreignDefault,
            "snapshot.storage.k8s.io/v1",
            "VolumeSnapshotClass",
            DEFAULT_SNAPSHOT_CLASS_ANNOTATION,
            "snapshotclass");
    if (Boolean.TRUE.equals(spec.getSnapshots().getVelero())) {
      c.getMetadata().getLabels().put(VELERO_CLASS_LABEL, "true");
    }
    return c;
  }

  /**
   * The VolumeGroupSnapshotClass of the same name, driver and deletion policy as the
   * VolumeSnapshotClass, labelled {@value #MANAGED_BY_LABEL} with the controller's group
   * snapshotter's identity ({@link ControllerDeployment#GROUP_SNAPSHOTTER_IDENTITY}): with
   * --node-deployment that sidecar reads group classes only through that label. Default as the
   * VolumeSnapshotClass is, unless another group class already is ({@code foreignDefault}).
   */
  static GenericKubernetesResource groupSnapshotClass(
      Names n, StorageClusterSpec spec, String foreignDefault) {
    GenericKubernetesResource c =
        snapshotClassOfKind(
            n,
            spec,
            foreignDefault,
            "groupsnapshot.storage.k8s.io/v1",
            "VolumeGroupSnapshotClass",
            DEFAULT_GROUP_SNAPSHOT_CLASS_ANNOTATION,
            "groupsnapshotclass");
    c.getMetadata()
        .getLabels()
        .put(MANAGED_BY_LABEL, ControllerDeployment.GROUP_SNAPSHOTTER_IDENTITY);
    return c;
  }

  private static GenericKubernetesResource snapshotClassOfKind(
      Names n,
      StorageClusterSpec spec,
      String foreignDefault,
      String apiVersion,
      String kind,
      String defaultAnnotation,
      String component) {
    SnapshotSpec snap = spec.getSnapshots();
    ObjectMeta meta = Rbac.meta(n, n.snapshotClass(snap.getClassName()), null, component);
    if (Boolean.TRUE.equals(snap.getDefaultClass()) && foreignDefault == null) {
      meta.setAnnotations(Map.of(defaultAnnotation, "true"));
    }
    return new GenericKubernetesResourceBuilder()
        .withApiVersion(apiVersion)
        .withKind(kind)
        .withMetadata(meta)
        .addToAdditionalProperties("driver", spec.getDriver().getName())
        .addToAdditionalProperties("deletionPolicy", snap.getDeletionPolicy().name())
        .build();
  }
}

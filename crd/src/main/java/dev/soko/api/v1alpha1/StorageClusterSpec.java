package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.ArrayList;
import java.util.List;

/**
 * The desired installation. Fields carry Java initialisers equal to their schema defaults so that
 * an offline {@code render} of a file sees the same values the API server would fill in.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
// Cross-field rules: each message names the fields it is about. The paths are absent when not
// given (the API server defaults fields only inside objects that are present), hence the has().
@ValidationRule(
    value = "self.pools.all(a, self.pools.exists_one(b, b.name == a.name))",
    message = "spec.pools[].name must be unique")
@ValidationRule(
    value = "self.pools.all(a, self.pools.exists_one(b, b.path == a.path))",
    message = "spec.pools[].path must be unique: two pools would share one host directory")
@ValidationRule(
    value = "self.pools.all(a, !self.pools.exists(b, b.path.startsWith(a.path + '/')))",
    message = "spec.pools[].path must not lie inside another pool's path")
@ValidationRule(
    value =
        "self.pools.all(p, !["
            + StorageClusterSpec.POD_PATHS
            + "].exists(d, p.path == d || p.path.startsWith(d + '/')))",
    message =
        "spec.pools[].path must not be or lie under /csi, /dev, /registration or"
            + " nodePlugin.kubeletDir: the node pods mount those")
@ValidationRule(
    value =
        "!has(self.storageClasses) ||"
            + " self.storageClasses.all(a, self.storageClasses.exists_one(b, b.name == a.name))",
    message = "spec.storageClasses[].name must be unique")
@ValidationRule(
    value =
        "!has(self.storageClasses) ||"
            + " self.storageClasses.all(c, self.pools.exists(p, p.name == c.pool))",
    message = "spec.storageClasses[].pool must name a pool listed in spec.pools")
@ValidationRule(
    value =
        "!has(self.storageClasses) ||"
            + " self.storageClasses.filter(c, has(c.default) && c.default).size() <= 1",
    message = "at most one of spec.storageClasses[] may be marked default")
@ValidationRule(
    value =
        "!has(self.storageClasses) || self.storageClasses.all(c, self.pools.all(p, p.name !="
            + " c.pool || !has(p.fsTypes) || p.fsTypes.size() == 0 || (has(c.fsType) ? c.fsType"
            + " : "
            + StorageClusterSpec.BTRFS_POOL
            + " ? 'btrfs' : 'ext4') in p.fsTypes))",
    message =
        "spec.storageClasses[].fsType must be one of its pool's spec.pools[].fsTypes (unset:"
            + " ext4, or btrfs on a BtrfsSubvolume pool)")
@ValidationRule(
    value =
        "self.pools.all(p, !"
            + StorageClusterSpec.BTRFS_POOL
            + " || !has(p.fsTypes) || p.fsTypes.all(f, f == 'btrfs'))",
    message =
        "spec.pools[].fsTypes of a BtrfsSubvolume pool may name btrfs only: its volumes are"
            + " subvolumes of the pool's own btrfs filesystem")
@ValidationRule(
    value =
        "self.pools.all(p, "
            + StorageClusterSpec.BTRFS_POOL
            + " || !has(p.fsTypes) || !('btrfs' in p.fsTypes))",
    message =
        "spec.pools[].fsTypes may name btrfs only on a BtrfsSubvolume pool: an ImageFile pool"
            + " formats its image files ext4 or xfs")
@ValidationRule(
    value =
        "!has(self.storageClasses) || self.storageClasses.all(c, !has(c.fsType) || c.fsType =="
            + " 'btrfs' || !self.pools.exists(p, p.name == c.pool && "
            + StorageClusterSpec.BTRFS_POOL
            + "))",
    message =
        "spec.storageClasses[].fsType of a class on a BtrfsSubvolume pool must be btrfs or unset:"
            + " such a pool serves btrfs volumes only")
@ValidationRule(
    value =
        "!has(self.storageClasses) || self.storageClasses.all(c, !has(c.fsType) || c.fsType !="
            + " 'btrfs' || self.pools.exists(p, p.name == c.pool && "
            + StorageClusterSpec.BTRFS_POOL
            + "))",
    message =
        "spec.storageClasses[].fsType btrfs needs a BtrfsSubvolume pool: an ImageFile pool"
            + " formats its image files ext4 or xfs")
// fscrypt encrypts the files of the volume's own ext4 filesystem: the message says what else would
// be needed. A block-mode claim is the driver's to refuse (a class does not know its claims' mode).
@ValidationRule(
    value =
        "!has(self.storageClasses) || self.storageClasses.all(c, !has(c.encryption) ||"
            + " !self.pools.exists(p, p.name == c.pool && "
            + StorageClusterSpec.BTRFS_POOL
            + "))",
    message =
        "spec.storageClasses[].encryption needs an ImageFile pool: a BtrfsSubvolume pool's volumes"
            + " share the pool's btrfs filesystem, and encrypting them would need dm-crypt, which"
            + " the driver does not use")
@ValidationRule(
    value =
        "!has(self.storageClasses) || self.storageClasses.all(c, !has(c.encryption) ||"
            + " !has(c.fsType) || c.fsType == 'ext4')",
    message =
        "spec.storageClasses[].encryption needs fsType ext4 (or unset): fscrypt encrypts the files"
            + " of an ext4 filesystem, and encrypting another would need dm-crypt, which the driver"
            + " does not use")
// A transition rule (only on update). Keyed by name and by path: a pool's volumes are found by
// its name (StorageClasses, volume records) and live in its path; either way a new backend would
// not see them. Unset in an object stored before the field existed means ImageFile.
@ValidationRule(
    value =
        "self.pools.all(p, oldSelf.pools.all(o, (o.name != p.name && o.path != p.path) ||"
            + " (has(o.backend) ? o.backend : 'ImageFile') == (has(p.backend) ? p.backend :"
            + " 'ImageFile')))",
    message =
        "spec.pools[].backend cannot change on an existing pool (same name or path): its volumes"
            + " would be stranded; to switch, move the volumes off, remove the pool and add a new"
            + " one")
@ValidationRule(
    value =
        "!has(self.driver) || !has(self.driver.registration) || self.driver.registration !="
            + " 'Sidecars' || !has(self.driver.metricsPort) || self.driver.metricsPort != 9809",
    message =
        "with spec.driver.registration Sidecars, spec.driver.metricsPort must not be 9809, the"
            + " health port of node-driver-registrar")
@ValidationRule(
    value =
        StorageClusterSpec.SIDECARS
            + " || !has(self.nodePlugin) || !has(self.nodePlugin.resources) ||"
            + " !self.nodePlugin.resources.exists(k, k in ['node-driver-registrar',"
            + " 'liveness-probe'])",
    message =
        "spec.nodePlugin.resources may name node-driver-registrar and liveness-probe only with"
            + " spec.driver.registration Sidecars: with BuiltIn those containers do not run")
@ValidationRule(
    value =
        StorageClusterSpec.SIDECARS
            + " || !has(self.controller) || !has(self.controller.resources) ||"
            + " !('liveness-probe' in self.controller.resources)",
    message =
        "spec.controller.resources may name liveness-probe only with spec.driver.registration"
            + " Sidecars: with BuiltIn that container does not run")
@ValidationRule(
    value =
        "!has(self.snapshots) || !has(self.snapshots.enabled) || self.snapshots.enabled ||"
            + " !has(self.nodePlugin) || !has(self.nodePlugin.resources) ||"
            + " !('csi-snapshotter' in self.nodePlugin.resources)",
    message =
        "spec.nodePlugin.resources may name csi-snapshotter only with spec.snapshots.enabled:"
            + " without snapshots that container does not run")
@ValidationRule(
    value =
        "!has(self.snapshots) || !has(self.snapshots.enabled) || self.snapshots.enabled ||"
            + " !has(self.controller) || !has(self.controller.resources) ||"
            + " !('csi-group-snapshotter' in self.controller.resources)",
    message =
        "spec.controller.resources may name csi-group-snapshotter only with"
            + " spec.snapshots.enabled: without snapshots that container does not run")
@ValidationRule(
    value =
        "!has(self.snapshots) || !has(self.snapshots.enabled) || self.snapshots.enabled ||"
            + " !has(self.snapshots.default) || !self.snapshots.default",
    message =
        "spec.snapshots.default needs spec.snapshots.enabled: without snapshots there is no"
            + " VolumeSnapshotClass to mark default")
@ValidationRule(
    value =
        "!has(self.snapshots) || !has(self.snapshots.enabled) || self.snapshots.enabled ||"
            + " !has(self.snapshots.velero) || !self.snapshots.velero",
    message =
        "spec.snapshots.velero needs spec.snapshots.enabled: without snapshots there is no"
            + " VolumeSnapshotClass for Velero to use")
public class StorageClusterSpec {
  public static final String DEFAULT_NAMESPACE = "soko-system";

  /** Whether registration is Sidecars; BuiltIn when driver or registration is not given. */
  static final String SIDECARS =
      "(has(self.driver) && has(self.driver.registration) && self.driver.registration =="
          + " 'Sidecars')";

  /** Whether pool {@code p} is a BtrfsSubvolume pool (unset: ImageFile, the default). */
  static final String BTRFS_POOL = "(has(p.backend) && p.backend == 'BtrfsSubvolume')";

  /** Directories the node pods mount besides the pools (see the operator's NodeDaemonSet). */
  static final String POD_PATHS =
      "'/csi', '/dev', '/registration', (has(self.nodePlugin) && has(self.nodePlugin.kubeletDir)"
          + " ? self.nodePlugin.kubeletDir : '"
          + NodePluginSpec.DEFAULT_KUBELET_DIR
          + "')";

  @JsonPropertyDescription(
      "Namespace for the driver's Deployment, DaemonSet and ServiceAccounts. Created if absent.")
  @Default(DEFAULT_NAMESPACE)
  @ValidationRule(
      value = Validation.DNS_LABEL_RULE,
      message = "must be a valid namespace name (lower case letters, digits and '-')")
  @Size(max = 63)
  private String namespace = DEFAULT_NAMESPACE;

  @JsonPropertyDescription("The CSI driver itself.")
  private DriverSpec driver = new DriverSpec();

  @JsonPropertyDescription("Host directories on each node from which volumes are carved.")
  @Required
  @Size(min = 1, max = 16)
  private List<PoolSpec> pools = new ArrayList<>();

  @JsonPropertyDescription("The per-node DaemonSet.")
  private NodePluginSpec nodePlugin = new NodePluginSpec();

  @JsonPropertyDescription("The cluster-wide controller Deployment (expansion).")
  private ControllerSpec controller = new ControllerSpec();

  @JsonPropertyDescription("Image overrides, registry rewrite, pull policy and secrets.")
  private ImagesSpec images = new ImagesSpec();

  @JsonPropertyDescription("StorageClasses to create, each backed by one pool.")
  @Size(max = 32)
  private List<StorageClassSpec> storageClasses = new ArrayList<>();

  @JsonPropertyDescription("Snapshot support and the VolumeSnapshotClass.")
  private SnapshotSpec snapshots = new SnapshotSpec();

  @JsonPropertyDescription("Optional features.")
  private FeaturesSpec features = new FeaturesSpec();

  @JsonPropertyDescription(
      "What deleting this StorageCluster does while PersistentVolumes of its driver exist.")
  @Default("RefuseWhileVolumesExist")
  private UninstallPolicy uninstallPolicy = UninstallPolicy.RefuseWhileVolumesExist;

  @JsonPropertyDescription(
      "What happens to the driver's PersistentVolumes when the Node they are bound to is"
          + " deleted: Retain (the default) or Delete after a delay.")
  private NodeLossSpec nodeLoss = new NodeLossSpec();

  public String getNamespace() {
    return namespace;
  }

  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }

  public DriverSpec getDriver() {
    return driver;
  }

  public void setDriver(DriverSpec driver) {
    this.driver = driver;
  }

  public List<PoolSpec> getPools() {
    return pools;
  }

  public void setPools(List<PoolSpec> pools) {
    this.pools = pools;
  }

  public NodePluginSpec getNodePlugin() {
    return nodePlugin;
  }

  public void setNodePlugin(NodePluginSpec nodePlugin) {
    this.nodePlugin = nodePlugin;
  }

  public ControllerSpec getController() {
    return controller;
  }

  public void setController(ControllerSpec controller) {
    this.controller = controller;
  }

  public ImagesSpec getImages() {
    return images;
  }

  public void setImages(ImagesSpec images) {
    this.images = images;
  }

  public List<StorageClassSpec> getStorageClasses() {
    return storageClasses;
  }

  public void setStorageClasses(List<StorageClassSpec> storageClasses) {
    this.storageClasses = storageClasses;
  }

  public SnapshotSpec getSnapshots() {
    return snapshots;
  }

  public void setSnapshots(SnapshotSpec snapshots) {
    this.snapshots = snapshots;
  }

  public FeaturesSpec getFeatures() {
    return features;
  }

  public void setFeatures(FeaturesSpec features) {
    this.features = features;
  }

  public UninstallPolicy getUninstallPolicy() {
    return uninstallPolicy;
  }

  public void setUninstallPolicy(UninstallPolicy uninstallPolicy) {
    this.uninstallPolicy = uninstallPolicy;
  }

  public NodeLossSpec getNodeLoss() {
    return nodeLoss;
  }

  public void setNodeLoss(NodeLossSpec nodeLoss) {
    this.nodeLoss = nodeLoss;
  }
}

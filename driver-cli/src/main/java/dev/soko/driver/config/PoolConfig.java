package dev.soko.driver.config;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One {@code --pool} flag, as {@code cli.PoolSpec} parses it (its fields: {@code cli.PoolField}).
 *
 * @param capacityBytes the pool's size; 0 means "the size of the filesystem holding path", read
 *     (statfs) whenever asked
 * @param overprovisionRatio how many bytes of volume capacity one byte of pool may back (>= 1.0)
 * @param fsTypes filesystem types volumes of this pool may use; the first is the default
 * @param requireMountPoint the pool directory must be the root of a mounted filesystem
 * @param allowRootFilesystem the pool may sit on the filesystem of the kubelet's directory
 * @param nodeSelector node labels the pool needs, all of them (a Pod's nodeSelector); empty: every
 *     node
 * @param backend how the pool stores its volumes
 */
public record PoolConfig(
    String name,
    Path path,
    long capacityBytes,
    double overprovisionRatio,
    Set<String> fsTypes,
    boolean requireMountPoint,
    boolean allowRootFilesystem,
    Map<String, String> nodeSelector,
    Backend backend) {

  /**
   * How a pool stores its volumes, one backend per pool: the one table of what each backend is
   * called and what it serves. The flag parser, GetCapacity and CreateVolume, the operator's checks
   * and the CRD's rules read it (a test in each of those places fails when its copy disagrees), so
   * that no layer has to know a backend's implementation to refuse what it cannot do, and a new
   * backend is a new row here.
   */
  public enum Backend {
    /** Sparse image files attached through loop devices, with ext4 or xfs (or raw, for block). */
    IMAGE_FILE("image-file", "ImageFile", List.of("ext4", "xfs"), true, true),
    /**
     * Btrfs subvolumes with a qgroup limit each, bind-mounted: no loop device and no second
     * filesystem, so the data path is the pool filesystem's own. Filesystem volumes only, and their
     * filesystem is the pool's: btrfs.
     */
    BTRFS_SUBVOLUME("btrfs-subvolume", "BtrfsSubvolume", List.of("btrfs"), false, false);

    private final String flagName;
    private final String crdName;
    private final List<String> fsTypes;
    private final boolean formatsVolumes;
    private final boolean blockVolumes;

    Backend(
        String flagName,
        String crdName,
        List<String> fsTypes,
        boolean formatsVolumes,
        boolean blockVolumes) {
      this.flagName = flagName;
      this.crdName = crdName;
      this.fsTypes = fsTypes;
      this.formatsVolumes = formatsVolumes;
      this.blockVolumes = blockVolumes;
    }

    /** The name in the {@code --pool} flag's {@code backend=} field. */
    public String flagName() {
      return flagName;
    }

    /** The name in the StorageCluster's {@code spec.pools[].backend}. */
    public String crdName() {
      return crdName;
    }

    /** The filesystems this backend's volumes can have, the default first. */
    public Set<String> fsTypes() {
      return Collections.unmodifiableSet(new LinkedHashSet<>(fsTypes));
    }

    /** The filesystem of a volume whose pool and request name none. */
    public String defaultFsType() {
      return fsTypes.get(0);
    }

    /**
     * Whether the driver makes each volume's filesystem, so that a pool may offer any of {@link
     * #fsTypes()}; when not, a volume's filesystem is the pool's own and a pool offers exactly
     * those.
     */
    public boolean formatsVolumes() {
      return formatsVolumes;
    }

    /** Whether it serves raw block volumes. */
    public boolean blockVolumes() {
      return blockVolumes;
    }

    /** The backend a flag names, or empty for an unknown name. */
    public static Optional<Backend> ofFlag(String name) {
      return Arrays.stream(values()).filter(b -> b.flagName.equals(name)).findFirst();
    }

    /** The backend a StorageCluster names, or empty for an unknown name. */
    public static Optional<Backend> ofCrd(String name) {
      return Arrays.stream(values()).filter(b -> b.crdName.equals(name)).findFirst();
    }

    /** The backend that serves a filesystem, or empty when none does. */
    public static Optional<Backend> serving(String fsType) {
      return Arrays.stream(values()).filter(b -> b.fsTypes.contains(fsType)).findFirst();
    }

    /**
     * Every filesystem the driver makes on a volume (those of the backends that {@link
     * #formatsVolumes()}), in table order: the mounter's allow-list for mkfs and grow.
     */
    public static Set<String> formattedFsTypes() {
      Set<String> formatted = new LinkedHashSet<>();
      for (Backend backend : values()) {
        if (backend.formatsVolumes) {
          formatted.addAll(backend.fsTypes);
        }
      }
      return Collections.unmodifiableSet(formatted);
    }

    /** Every filesystem some backend serves, in table order. */
    public static Set<String> allFsTypes() {
      Set<String> all = new LinkedHashSet<>();
      for (Backend backend : values()) {
        all.addAll(backend.fsTypes);
      }
      return Collections.unmodifiableSet(all);
    }
  }

  public PoolConfig {
    nodeSelector = Map.copyOf(nodeSelector);
    Objects.requireNonNull(backend);
  }

  /** An image-file pool with a node selector. */
  public PoolConfig(
      String name,
      Path path,
      long capacityBytes,
      double overprovisionRatio,
      Set<String> fsTypes,
      boolean requireMountPoint,
      boolean allowRootFilesystem,
      Map<String, String> nodeSelector) {
    this(
        name,
        path,
        capacityBytes,
        overprovisionRatio,
        fsTypes,
        requireMountPoint,
        allowRootFilesystem,
        nodeSelector,
        Backend.IMAGE_FILE);
  }

  /** An image-file pool on every node, with the given placement rules. */
  public PoolConfig(
      String name,
      Path path,
      long capacityBytes,
      double overprovisionRatio,
      Set<String> fsTypes,
      boolean requireMountPoint,
      boolean allowRootFilesystem) {
    this(
        name,
        path,
        capacityBytes,
        overprovisionRatio,
        fsTypes,
        requireMountPoint,
        allowRootFilesystem,
        Map.of());
  }

  /**
   * A pool on every node with the default placement rules: no mount point required, not on the root
   * fs.
   */
  public PoolConfig(
      String name, Path path, long capacityBytes, double overprovisionRatio, Set<String> fsTypes) {
    this(name, path, capacityBytes, overprovisionRatio, fsTypes, false, false);
  }
}

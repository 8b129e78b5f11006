package dev.soko.driver.config;

import java.nio.file.Path;
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
   * How a pool stores its volumes, one backend per pool. What each can serve is said here, where
   * the flag is parsed and where GetCapacity and CreateVolume look, so that no layer has to know a
   * backend's implementation to refuse what it cannot do.
   */
  public enum Backend {
    /** Sparse image files attached through loop devices, with ext4 or xfs (or raw, for block). */
    IMAGE_FILE("image-file", List.of("ext4", "xfs"), true),
    /**
     * Btrfs subvolumes with a qgroup limit each, bind-mounted: no loop device and no second
     * filesystem, so the data path is the pool filesystem's own. Filesystem volumes only, and their
     * filesystem is the pool's: btrfs.
     */
    BTRFS_SUBVOLUME("btrfs-subvolume", List.of("btrfs"), false);

    private final String flagName;
    private final List<String> fsTypes;
    private final boolean blockVolumes;

    Backend(String flagName, List<String> fsTypes, boolean blockVolumes) {
      this.flagName = flagName;
      this.fsTypes = fsTypes;
      this.blockVolumes = blockVolumes;
    }

    /** The name in the {@code --pool} flag's {@code backend=} field. */
    public String flagName() {
      return flagName;
    }

    /** The filesystems this backend's volumes can have, the default first. */
    public Set<String> fsTypes() {
      return Collections.unmodifiableSet(new LinkedHashSet<>(fsTypes));
    }

    /** Whether it serves raw block volumes. */
    public boolean blockVolumes() {
      return blockVolumes;
    }

    /** The backend a flag names, or empty for an unknown name. */
    public static Optional<Backend> ofFlag(String name) {
      for (Backend backend : values()) {
        if (backend.flagName.equals(name)) {
          return Optional.of(backend);
        }
      }
      return Optional.empty();
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

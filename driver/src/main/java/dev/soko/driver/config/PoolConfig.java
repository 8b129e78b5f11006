package dev.soko.driver.config;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * One {@code --pool} flag: {@code name=NAME,path=DIR[,capacity=QUANTITY][,overprovision=RATIO]...}.
 *
 * @param capacityBytes the pool's size; 0 means "the size of the filesystem holding path", read
 *     (statfs) whenever asked
 * @param overprovisionRatio how many bytes of volume capacity one byte of pool may back (>= 1.0)
 * @param fsTypes filesystem types volumes of this pool may use; the first is the default
 * @param requireMountPoint the pool directory must be the root of a mounted filesystem
 * @param allowRootFilesystem the pool may sit on the filesystem of the kubelet's directory
 * @param nodeSelector node labels the pool needs, all of them (a Pod's nodeSelector); empty: every
 *     node
 */
public record PoolConfig(
    String name,
    Path path,
    long capacityBytes,
    double overprovisionRatio,
    Set<String> fsTypes,
    boolean requireMountPoint,
    boolean allowRootFilesystem,
    Map<String, String> nodeSelector) {

  public PoolConfig {
    nodeSelector = Map.copyOf(nodeSelector);
  }

  /** A pool on every node, with the given placement rules. */
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

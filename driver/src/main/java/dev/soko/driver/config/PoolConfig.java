package dev.soko.driver.config;

import java.nio.file.Path;
import java.util.Set;

/**
 * One {@code --pool} flag: {@code name=NAME,path=DIR[,capacity=QUANTITY][,overprovision=RATIO]}.
 *
 * @param capacityBytes the pool's size; 0 means "the size of the filesystem holding path", read
 *     (statfs) whenever asked
 * @param overprovisionRatio how many bytes of volume capacity one byte of pool may back (>= 1.0)
 * @param fsTypes filesystem types volumes of this pool may use; the first is the default
 */
public record PoolConfig(
    String name, Path path, long capacityBytes, double overprovisionRatio, Set<String> fsTypes) {}

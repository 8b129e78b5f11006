package dev.soko.driver.backend;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.mount.LoopDevice;
import dev.soko.driver.pool.Pool;
import java.util.ArrayList;
import java.util.List;

/**
 * Which backend serves a pool: the one its configuration names ({@code backend=} in its {@code
 * --pool} flag). A new backend is a {@link PoolConfig.Backend} constant, a {@link VolumeBackend}
 * and one line here.
 */
public final class Backends {
  private final VolumeBackend imageFiles;
  private final VolumeBackend btrfsSubvolumes;

  public Backends(VolumeBackend imageFiles, VolumeBackend btrfsSubvolumes) {
    this.imageFiles = imageFiles;
    this.btrfsSubvolumes = btrfsSubvolumes;
  }

  public VolumeBackend of(Pool pool) {
    return of(pool.config().backend());
  }

  public VolumeBackend of(PoolConfig.Backend backend) {
    return switch (backend) {
      case IMAGE_FILE -> imageFiles;
      case BTRFS_SUBVOLUME -> btrfsSubvolumes;
    };
  }

  /** Every backend's devices, for one look at the host (see {@link VolumeBackend#inventory}). */
  public List<LoopDevice> inventory() {
    List<LoopDevice> all = new ArrayList<>(imageFiles.inventory());
    all.addAll(btrfsSubvolumes.inventory());
    return all;
  }
}

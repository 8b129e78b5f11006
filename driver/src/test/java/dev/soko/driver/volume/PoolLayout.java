package dev.soko.driver.volume;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.AccessType;
import java.nio.file.Path;

/**
 * Where a pool of one backend keeps a volume's and a snapshot's storage, and where {@link
 * CrashWorkload} writes the content that {@link CrashAudit} looks for: an image file's first bytes
 * (the volume is a raw block device to the workload), or a file in a btrfs subvolume (a btrfs pool
 * serves filesystem volumes only, and its subvolume is the volume's filesystem).
 */
record PoolLayout(Path pool, PoolConfig.Backend backend) {
  /** The file in a subvolume that holds the content. */
  private static final String CONTENT_FILE = "content";

  Path volumesDir() {
    return pool.resolve(backend == PoolConfig.Backend.IMAGE_FILE ? "images" : "volumes");
  }

  Path snapshotsDir() {
    return pool.resolve("snapshots");
  }

  /** The name a volume's or snapshot's storage has in its directory. */
  String storageName(String id) {
    return switch (backend) {
      case IMAGE_FILE -> id + ".img";
      case BTRFS_SUBVOLUME -> id;
    };
  }

  Path volume(String id) {
    return volumesDir().resolve(storageName(id));
  }

  Path snapshot(String id) {
    return snapshotsDir().resolve(storageName(id));
  }

  /** The file whose first bytes hold the content of the volume or snapshot stored at {@code at}. */
  Path contentFile(Path at) {
    return switch (backend) {
      case IMAGE_FILE -> at;
      case BTRFS_SUBVOLUME -> at.resolve(CONTENT_FILE);
    };
  }

  /** The access type the workload's volumes have: the only one a btrfs pool serves for them. */
  AccessType accessType() {
    return backend.blockVolumes() ? AccessType.BLOCK : AccessType.FILESYSTEM;
  }

  /** The fsType the workload asks for: none for a block volume, the backend's own otherwise. */
  String fsType() {
    return accessType() == AccessType.BLOCK ? "" : backend.fsTypes().iterator().next();
  }
}

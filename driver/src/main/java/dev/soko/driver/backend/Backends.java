package dev.soko.driver.backend;

import dev.soko.driver.backend.btrfs.BtrfsSubvolumeBackend;
import dev.soko.driver.backend.imagefile.ImageFileBackend;
import dev.soko.driver.btrfs.Btrfs;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.mount.LoopDevices;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.sys.LinuxSyscalls;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Which backend serves a pool: the one its configuration names ({@code backend=} in its {@code
 * --pool} flag). The one place that names the implementations, each in a package of its own below
 * this one: a new backend is a {@link PoolConfig.Backend} constant, such a package (a {@link
 * VolumeBackend} whose {@link VolumeBackend#nodeSide} is {@link BlockDevices} or {@link
 * DirectoryVolumes}), a run of {@code VolumeStorageContract} and one line in {@link #onHost}.
 */
public final class Backends {
  private final Map<PoolConfig.Backend, VolumeBackend> byKind;

  public Backends(Map<PoolConfig.Backend, VolumeBackend> byKind) {
    this.byKind = new EnumMap<>(byKind);
  }

  /** The backends of this host, over its loop devices and running {@code btrfs} through exec. */
  public static Backends onHost(Exec exec, LoopDevices loops) {
    return new Backends(
        Map.of(
            PoolConfig.Backend.IMAGE_FILE, new ImageFileBackend(exec, loops, new LinuxSyscalls()),
            PoolConfig.Backend.BTRFS_SUBVOLUME, new BtrfsSubvolumeBackend(new Btrfs(exec))));
  }

  public VolumeBackend of(Pool pool) {
    return of(pool.config().backend());
  }

  public VolumeBackend of(PoolConfig.Backend backend) {
    VolumeBackend found = byKind.get(backend);
    if (found == null) {
      throw new IllegalStateException("no backend serves " + backend.flagName());
    }
    return found;
  }

  /** The flag names of the backends that serve block volumes, for a refusal's message. */
  public List<String> servingBlockVolumes() {
    return byKind.values().stream()
        .map(VolumeBackend::traits)
        .filter(StorageTraits::blockVolumes)
        .map(StorageTraits::flagName)
        .toList();
  }

  /**
   * Every block backend's attached devices, for one look at the host (see {@link
   * BlockDevices#inventory}).
   */
  public List<AttachedDevice> inventory() {
    List<AttachedDevice> all = new ArrayList<>();
    for (VolumeBackend backend : byKind.values()) {
      if (backend.nodeSide() instanceof BlockDevices devices) {
        all.addAll(devices.inventory());
      }
    }
    return all;
  }
}

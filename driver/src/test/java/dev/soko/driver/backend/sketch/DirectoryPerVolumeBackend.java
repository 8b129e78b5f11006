package dev.soko.driver.backend.sketch;

import dev.soko.driver.backend.BlockMaps;
import dev.soko.driver.backend.DirectoryVolumes;
import dev.soko.driver.backend.MountIdentity;
import dev.soko.driver.backend.NodeSide;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.backend.VolumeSpace;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountInfo;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolException;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.pool.VolumeLayout;
import dev.soko.driver.state.Ids;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A sketch of a third backend, to show where one goes: a volume is a plain directory ({@code
 * dirs/<id>}) whose capacity is written in a file beside its data, a copy or snapshot a recursive
 * copy. It lives in this package alone and implements only the {@code backend} interfaces; no class
 * of {@code csi/}, {@code volume/} or {@code pool/} knows it. A real one also adds its row to the
 * backend table ({@link PoolConfig.Backend}, whose traits this sketch borrows from btrfs) and one
 * line to {@code Backends.onHost}. Its node side is a directory's: the volume layer bind-mounts it
 * as it does a btrfs subvolume, and its use is the size of the files in it.
 */
public final class DirectoryPerVolumeBackend implements VolumeBackend, DirectoryVolumes {
  private static final String CAPACITY = ".capacity";
  private static final StorageTraits TRAITS =
      StorageTraits.of(
          PoolConfig.Backend.BTRFS_SUBVOLUME, true, "directory", new VolumeLayout("dirs", ""));

  @Override
  public StorageTraits traits() {
    return TRAITS;
  }

  @Override
  public NodeSide nodeSide() {
    return this;
  }

  @Override
  public void create(Pool pool, Path location, long bytes) {
    io(
        () -> {
          Files.createDirectory(location);
          Files.writeString(location.resolve(CAPACITY), Long.toString(bytes));
        });
  }

  @Override
  public void copy(Pool targetPool, Path source, Path target, boolean samePool) {
    io(() -> copyTree(source, target));
  }

  @Override
  public void snapshot(Pool pool, Path source, Path target) {
    io(() -> copyTree(source, target));
  }

  private static void copyTree(Path source, Path target) throws IOException {
    try (Stream<Path> paths = Files.walk(source)) {
      for (Path from : paths.toList()) {
        Files.copy(from, target.resolve(source.relativize(from).toString()));
      }
    }
  }

  @Override
  public boolean exists(Path location) {
    return Files.isDirectory(location);
  }

  @Override
  public void delete(Path location) throws IOException {
    if (!Files.isDirectory(location)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(location)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    }
  }

  /** Only raises the written capacity: a directory has no size of its own to grow. */
  @Override
  public void grow(Pool pool, Path location, long bytes) {
    if (size(pool, location) < bytes) {
      io(() -> Files.writeString(location.resolve(CAPACITY), Long.toString(bytes)));
    }
  }

  @Override
  public long size(Pool pool, Path location) {
    try {
      return Long.parseLong(Files.readString(location.resolve(CAPACITY)).strip());
    } catch (IOException e) {
      throw new PoolException(PoolException.Kind.STORAGE_MISSING, location + " has no capacity", e);
    }
  }

  @Override
  public List<Path> stored(Pool pool) {
    return pool.locations();
  }

  @Override
  public Optional<String> idOf(Path location) {
    return Ids.ofLocation(location);
  }

  @Override
  public int tidy(Pool pool) {
    return 0;
  }

  /** Any directory will do: it needs nothing of the filesystem. */
  @Override
  public PoolVerdict checkPool(Path directory, Path resolved) {
    return PoolVerdict.READY;
  }

  /** Every write is complete once it returns: nothing waits for a later commit. */
  @Override
  public boolean restoreUncommitted(Pool pool, Path location, long bytes) {
    return false;
  }

  @Override
  public Optional<BlockMaps> blockMaps() {
    return Optional.empty();
  }

  @Override
  public MountIdentity identity(Pool pool, Path location) {
    return MountIdentity.of(pool, location, mounts());
  }

  @Override
  public boolean mounted(Pool pool, Path location) {
    return mounts().stream().anyMatch(identity(pool, location)::matches);
  }

  private static List<MountEntry> mounts() {
    return MountInfo.read(Path.of("/proc/self/mountinfo"));
  }

  /** The bytes of the files the volume holds, its capacity file left out. */
  @Override
  public VolumeSpace space(Pool pool, Path location) {
    try (Stream<Path> paths = Files.walk(location)) {
      long used = 0;
      for (Path path : paths.filter(Files::isRegularFile).toList()) {
        used += path.getFileName().toString().equals(CAPACITY) ? 0 : Files.size(path);
      }
      return new VolumeSpace(used, size(pool, location));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private interface IoStep {
    void run() throws IOException;
  }

  private static void io(IoStep step) {
    try {
      step.run();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

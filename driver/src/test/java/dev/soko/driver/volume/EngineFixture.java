package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.attribute.AttributeRegistry;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.mount.FakeLoopDevices;
import dev.soko.driver.mount.FakeMounter;
import dev.soko.driver.pool.NodeLabels;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** Builds a {@link LocalVolumeManager} over a temp pool with fake processes, mounts and loops. */
final class EngineFixture {
  static final long MIB = 1L << 20;

  final Path pool;
  final Path kubelet;
  final FakeExec exec = new FakeExec();
  final FakeMounter mounter = new FakeMounter();
  final FakeLoopDevices loops = new FakeLoopDevices();
  final long capacity;

  EngineFixture(Path dir, long capacity) {
    this.pool = dir.resolve("pool");
    this.kubelet = dir.resolve("kubelet");
    this.capacity = capacity;
    try {
      Files.createDirectories(kubelet);
      Files.createDirectories(pool); // the driver never creates a pool's directory
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    // The fake cp really copies, so snapshot and restore tests can check content.
    exec.on(List.of("cp"), EngineFixture::copied);
  }

  /** What the fake cp does: copies its source to its target, as cp does. */
  static ExecResult copied(List<String> command) {
    try {
      Files.copy(
          Path.of(command.get(command.size() - 2)), Path.of(command.get(command.size() - 1)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ExecResult(command, 0, "", "");
  }

  LocalVolumeManager open() {
    return open(Optional.empty(), false);
  }

  /** An engine whose restores of snapshots it does not hold ask {@code remote}. */
  LocalVolumeManager open(RemoteSnapshots remote) {
    LinkedHashSet<String> fsTypes = new LinkedHashSet<>(List.of("ext4", "xfs"));
    PoolConfig poolConfig = new PoolConfig("main", pool, capacity, 1.0, fsTypes, false, false);
    return new LocalVolumeManager(
        config(poolConfig, Optional.empty()),
        exec,
        mounter,
        loops,
        NodeLabels.unknownBecause("not read in this test"),
        remote);
  }

  /** An engine that knows the per-volume attributes of {@code kinds}, and no others. */
  LocalVolumeManager open(AttributeRegistry kinds) {
    LinkedHashSet<String> fsTypes = new LinkedHashSet<>(List.of("ext4", "xfs"));
    PoolConfig poolConfig = new PoolConfig("main", pool, capacity, 1.0, fsTypes, false, false);
    return new LocalVolumeManager(
        config(poolConfig, Optional.empty()),
        exec,
        mounter,
        loops,
        NodeLabels.unknownBecause("not read in this test"),
        RemoteSnapshots.NONE,
        kinds);
  }

  /** With the root-filesystem check against {@code kubeletDir}, and requireMountPoint. */
  LocalVolumeManager open(Optional<Path> kubeletDir, boolean requireMountPoint) {
    LinkedHashSet<String> fsTypes = new LinkedHashSet<>(List.of("ext4", "xfs"));
    PoolConfig poolConfig =
        new PoolConfig("main", pool, capacity, 1.0, fsTypes, requireMountPoint, false);
    return new LocalVolumeManager(config(poolConfig, kubeletDir), exec, mounter, loops);
  }

  /** The pool only on nodes with {@code selector}, on a node whose labels are {@code labels}. */
  LocalVolumeManager open(Map<String, String> selector, NodeLabels labels) {
    LinkedHashSet<String> fsTypes = new LinkedHashSet<>(List.of("ext4", "xfs"));
    PoolConfig poolConfig =
        new PoolConfig("main", pool, capacity, 1.0, fsTypes, false, false, selector);
    return new LocalVolumeManager(
        config(poolConfig, Optional.empty()), exec, mounter, loops, labels);
  }

  private DriverConfig config(PoolConfig poolConfig, Optional<Path> kubeletDir) {
    DriverConfig config =
        DriverConfig.node(
            "csi.soko.dev",
            "node-1",
            "unix:///tmp/csi.sock",
            List.of(poolConfig),
            List.of(kubelet),
            16);
    return kubeletDir.map(config::withKubeletDir).orElse(config);
  }

  static VolumeRequest fs(String name, long bytes) {
    return new VolumeRequest(
        name, bytes, 0, "", AccessType.FILESYSTEM, "ext4", ContentSource.EMPTY, Map.of());
  }

  static VolumeRequest block(String name, long bytes) {
    return new VolumeRequest(
        name, bytes, 0, "", AccessType.BLOCK, "", ContentSource.EMPTY, Map.of());
  }

  static StorageException.Reason reason(ThrowingCallable call) {
    StorageException e = catchThrowableOfType(StorageException.class, call);
    if (e == null) {
      throw new AssertionError("expected a StorageException");
    }
    return e.reason();
  }

  Path image(String volumeId) {
    return pool.resolve("images/" + volumeId + ".img");
  }

  Path record(String volumeId) {
    return pool.resolve(".soko/volumes/" + volumeId + ".json");
  }
}

package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * Real loop devices and mounts for integration tests, all under one temp directory: an XFS pool on
 * its own loop device (reflink-capable) and a pool on the host filesystem (sparse copies). {@link
 * #close} unmounts everything below the directory and detaches every loop device backed by a file
 * below it, whatever state a failed test left.
 */
final class HostFixture implements AutoCloseable {
  static final long MIB = 1L << 20;

  final Exec exec = new ProcessExec();
  final Path base;
  final Path kubelet;
  final Path xfsPool;
  final Path hostPool;

  HostFixture() throws IOException {
    requireRootWithLoopDevices();
    base = Files.createTempDirectory("soko-it-");
    kubelet = Files.createDirectories(base.resolve("kubelet"));
    hostPool = Files.createDirectories(base.resolve("host-pool"));
    Path backing = base.resolve("xfs-backing.img");
    Path mountPoint = Files.createDirectories(base.resolve("xfs"));
    try (var file = new java.io.RandomAccessFile(backing.toFile(), "rw")) {
      file.setLength(2048 * MIB);
    }
    exec.check(List.of("mkfs.xfs", "-q", backing.toString()), Exec.LONG);
    String device = new Losetup().attach(backing);
    exec.check("mount", "-t", "xfs", device, mountPoint.toString());
    xfsPool = Files.createDirectories(mountPoint.resolve("pool"));
  }

  /** Fails (never skips) when the host cannot give us loop devices: that is a broken CI runner. */
  private void requireRootWithLoopDevices() {
    assertThat(Path.of("/dev/loop-control"))
        .as("integration tests need loop devices (/dev/loop-control) and root")
        .exists();
    assertThat(exec.run(List.of("losetup", "--list"), Exec.SHORT).ok())
        .as("losetup must work (run as root)")
        .isTrue();
  }

  DriverConfig config(long xfsCapacity) {
    PoolConfig xfs =
        new PoolConfig(
            "xfs", xfsPool, xfsCapacity, 1.0, new LinkedHashSet<>(List.of("ext4", "xfs")));
    PoolConfig host =
        new PoolConfig(
            "host", hostPool, 2048 * MIB, 1.0, new LinkedHashSet<>(List.of("ext4", "xfs")));
    return new DriverConfig(
        "csi.soko.dev",
        "node-it",
        DriverConfig.Mode.NODE,
        "unix:///tmp/unused.sock",
        List.of(xfs, host),
        List.of(kubelet),
        64,
        "",
        "",
        Optional.empty());
  }

  LocalVolumeManager open() {
    return LocalVolumeManager.open(config(4096 * MIB));
  }

  /** Online ext4 growth needs CAP_SYS_RESOURCE (capability 24) in the effective set. */
  boolean mayGrowExt4Online() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("CapEff:")) {
        long caps = Long.parseLong(line.substring(7).strip(), 16);
        return (caps & (1L << 24)) != 0;
      }
    }
    return false;
  }

  /** Runs a program and returns its stdout, failing the test if it fails. */
  String sh(String... command) {
    return exec.check(List.of(command), Exec.LONG).stdout();
  }

  List<MountEntry> mountsBelowBase() {
    return MountInfo.read(Path.of("/proc/self/mountinfo")).stream()
        .filter(m -> m.mountPoint().startsWith(base))
        .toList();
  }

  List<String> loopsBelowBase() {
    return new Losetup()
        .list().stream()
            .filter(l -> l.backingFile().startsWith(base))
            .map(l -> l.device())
            .toList();
  }

  @Override
  public void close() throws IOException {
    List<String> problems = new ArrayList<>();
    Path xfsMount = xfsPool.getParent();
    // Volume mounts first (deepest and most recent first, so stacked mounts come off), then the
    // volumes' loop devices, then the XFS pool's mount and finally its own loop device.
    unmountAll(m -> !m.mountPoint().equals(xfsMount), problems);
    detachAll(l -> !l.getFileName().toString().equals("xfs-backing.img"));
    unmountAll(m -> true, problems);
    detachAll(l -> true);
    if (problems.isEmpty() && loopsBelowBase().isEmpty()) {
      exec.run(List.of("rm", "-rf", "--one-file-system", base.toString()), Exec.LONG);
    } else {
      problems.add("left loop devices " + loopsBelowBase());
      throw new IOException("cleanup incomplete: " + problems);
    }
  }

  private void unmountAll(java.util.function.Predicate<MountEntry> which, List<String> problems) {
    List<MountEntry> mounts = new ArrayList<>(mountsBelowBase());
    mounts.removeIf(which.negate());
    mounts.sort(
        Comparator.comparingInt((MountEntry m) -> m.mountPoint().getNameCount())
            .thenComparingInt(MountEntry::id)
            .reversed());
    for (MountEntry mount : mounts) {
      var result = exec.run(List.of("umount", mount.mountPoint().toString()), Exec.SHORT);
      if (!result.ok()) {
        problems.add(result.describe());
      }
    }
  }

  private void detachAll(java.util.function.Predicate<Path> backingFile) {
    for (var loop : new Losetup().list()) {
      if (loop.backingFile().startsWith(base) && backingFile.test(loop.backingFile())) {
        exec.run(List.of("losetup", "--detach", loop.device()), Exec.SHORT);
      }
    }
  }
}

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
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real loop devices and mounts for integration tests, all under one temp directory: an XFS pool on
 * its own loop device (reflink-capable) and a pool on the host filesystem (sparse copies). {@link
 * #close} unmounts everything below the directory and detaches every loop device backed by a file
 * below it, whatever state a failed test (or a failed set-up) left.
 *
 * <p>A JUnit extension, so that each test class states only how long it wants the host: on a static
 * field ({@code @RegisterExtension static final HostFixture host = new HostFixture()}) it is set up
 * once for the class; on an instance field, afresh for each test (JUnit calls only the per-test
 * callbacks of an extension held in an instance field). Public for the tests of other packages that
 * need a real pool (the data path's).
 */
public final class HostFixture
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  public static final long MIB = 1L << 20;
  private static final String XFS_BACKING = "xfs-backing.img";

  final Exec exec = new ProcessExec();
  // Set by setUp(), before any test of the scope runs.
  public Path base;
  public Path kubelet;
  public Path xfsPool;
  public Path hostPool;
  private boolean forTheClass;

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    forTheClass = true;
    setUp();
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    close();
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    if (!forTheClass) {
      setUp();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws IOException {
    if (!forTheClass) {
      close();
    }
  }

  private void setUp() throws IOException {
    requireRootWithLoopDevices();
    base = Files.createTempDirectory("soko-it-");
    kubelet = Files.createDirectories(base.resolve("kubelet"));
    hostPool = Files.createDirectories(base.resolve("host-pool"));
    Path mountPoint = mountNewXfs(base.resolve(XFS_BACKING), 2048 * MIB, base.resolve("xfs"));
    xfsPool = Files.createDirectories(mountPoint.resolve("pool"));
  }

  /**
   * A new XFS filesystem with reflink in a sparse file of {@code bytes} at {@code image}, attached
   * to a loop device and mounted at {@code mountPoint} (made if missing); {@link #close} takes it
   * down again when both lie below {@link #base}. Returns the mount point.
   */
  Path mountNewXfs(Path image, long bytes, Path mountPoint) throws IOException {
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
      file.setLength(bytes);
    }
    // reflink=1 is mkfs.xfs's default since xfsprogs 5.1; said here because the tests rely on it.
    sh("mkfs.xfs", "-q", "-m", "reflink=1", image.toString());
    Files.createDirectories(mountPoint);
    sh("mount", "-t", "xfs", new Losetup().attach(image), mountPoint.toString());
    return mountPoint;
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

  public DriverConfig config(long xfsCapacity) {
    PoolConfig xfs =
        new PoolConfig(
            "xfs", xfsPool, xfsCapacity, 1.0, new LinkedHashSet<>(List.of("ext4", "xfs")));
    PoolConfig host =
        new PoolConfig(
            "host", hostPool, 2048 * MIB, 1.0, new LinkedHashSet<>(List.of("ext4", "xfs")));
    return DriverConfig.node(
        "csi.soko.dev",
        "node-it",
        "unix:///tmp/unused.sock",
        List.of(xfs, host),
        List.of(kubelet),
        64);
  }

  public LocalVolumeManager open() {
    return LocalVolumeManager.open(config(4096 * MIB));
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

  /** Takes down everything below {@link #base}; fails when something could not be. */
  void close() throws IOException {
    if (base == null) {
      return; // set-up failed before it made anything
    }
    List<String> problems = new ArrayList<>();
    Path xfsMount = base.resolve("xfs");
    // Volume mounts first (deepest and most recent first, so stacked mounts come off), then the
    // volumes' loop devices, then the XFS pool's mount and finally its own loop device.
    unmountAll(m -> !m.mountPoint().equals(xfsMount), problems);
    detachAll(l -> !l.getFileName().toString().equals(XFS_BACKING));
    unmountAll(m -> true, problems);
    detachAll(l -> true);
    if (problems.isEmpty() && loopsBelowBase().isEmpty()) {
      exec.run(List.of("rm", "-rf", "--one-file-system", base.toString()), Exec.LONG);
    } else {
      problems.add("left loop devices " + loopsBelowBase());
      throw new IOException("cleanup incomplete: " + problems);
    }
  }

  private void unmountAll(Predicate<MountEntry> which, List<String> problems) {
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

  private void detachAll(Predicate<Path> backingFile) {
    for (var loop : new Losetup().list()) {
      if (loop.backingFile().startsWith(base) && backingFile.test(loop.backingFile())) {
        exec.run(List.of("losetup", "--detach", loop.device()), Exec.SHORT);
      }
    }
  }
}

package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real system calls, as root, on a real loop device: the whole stage/publish cycle that the
 * unit tests check against a fake, plus the errors the kernel gives. Fails (never skips) without
 * root and loop devices.
 */
class SyscallsIT {
  private static final long MIB = 1 << 20;

  @TempDir Path dir;
  final Exec exec = new ProcessExec();
  final Losetup loops = new Losetup();
  final SystemMounter mounter = new SystemMounter(exec);
  Path image;
  String device;

  @BeforeEach
  void image() throws IOException {
    assertThat(Path.of("/dev/loop-control")).as("loop devices and root are required").exists();
    image = dir.resolve("vol.img");
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
      file.setLength(64 * MIB);
    }
  }

  @AfterEach
  void cleanUp() {
    List<MountEntry> mounts = new java.util.ArrayList<>(mounter.mounts());
    java.util.Collections.reverse(mounts);
    for (MountEntry m : mounts) {
      if (m.mountPoint().startsWith(dir)) {
        exec.run(List.of("umount", m.mountPoint().toString()), Exec.SHORT);
      }
    }
    for (String d : loops.devicesFor(image)) {
      exec.run(List.of("losetup", "--detach", d), Exec.SHORT);
    }
  }

  @Test
  void attachNamesTheImageAndDetachFreesTheDeviceAtOnce() {
    device = loops.attach(image);
    assertThat(loops.devicesFor(image)).containsExactly(device);
    var shown = exec.check("losetup", "--noheadings", "-O", "BACK-FILE,DIO,AUTOCLEAR", device);
    assertThat(shown.stdout().strip().split("\\s+"))
        .as("backing file, no direct I/O, no autoclear")
        .containsExactly(image.toString(), "0", "0");
    loops.detach(device);
    assertThat(loops.devicesFor(image)).isEmpty();
    loops.detach(device); // already free: the outcome asked for
  }

  @Test
  void refreshSizePicksUpAGrownImage() throws IOException {
    device = loops.attach(image);
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
      file.setLength(96 * MIB);
    }
    loops.refreshSize(device);
    assertThat(exec.check("blockdev", "--getsize64", device).stdout().strip())
        .isEqualTo(String.valueOf(96 * MIB));
    loops.detach(device);
  }

  @Test
  void stagePublishReadOnlyUnpublishUnstage() throws IOException {
    device = loops.attach(image);
    mounter.makeFilesystem(device, "ext4");
    Path staging = Files.createDirectories(dir.resolve("staging"));
    Path target = Files.createDirectories(dir.resolve("target"));

    mounter.mount(device, staging, "ext4", List.of("noatime", "nodev", "nosuid", "discard"));
    MountEntry staged = mounter.mountAt(staging).orElseThrow();
    assertThat(staged.readOnly()).isFalse();
    Files.writeString(staging.resolve("data"), "hello");

    mounter.bind(staging, target);
    mounter.remountBind(target, List.of("ro"));
    assertThat(mounter.mountAt(target).orElseThrow().options())
        .as("read-only, and still what the staging mount had")
        .contains("ro", "nodev", "nosuid", "noatime");
    assertThat(Files.readString(target.resolve("data"))).isEqualTo("hello");
    assertThatThrownBy(() -> Files.writeString(target.resolve("more"), "x"))
        .isInstanceOf(FileSystemException.class)
        .hasMessageContaining("Read-only");
    assertThat(mounter.mountAt(staging).orElseThrow().readOnly())
        .as("the remount changes the bind only")
        .isFalse();

    FsStats stats = mounter.stats(target);
    assertThat(stats.totalBytes()).isBetween(40 * MIB, 64 * MIB);
    assertThat(stats.availableBytes()).isPositive().isLessThanOrEqualTo(stats.freeBytes());
    assertThat(stats.totalInodes()).isPositive();
    assertThat(stats.usedInodes()).isPositive();

    mounter.unmount(target);
    mounter.unmount(staging);
    assertThat(mounter.mountAt(target)).isEmpty();
    assertThat(mounter.mountAt(staging)).isEmpty();
    loops.detach(device);
    assertThat(loops.devicesFor(image)).isEmpty();
  }

  @Test
  void kernelErrorsAreInternalWithTheirErrno() throws IOException {
    Path plain = Files.createDirectories(dir.resolve("plain"));
    assertThatThrownBy(() -> mounter.unmount(plain))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("EINVAL (Invalid argument)")
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.FAILED);
    assertThatThrownBy(() -> mounter.bind(dir.resolve("absent"), plain))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("ENOENT");
    assertThatThrownBy(() -> mounter.stats(dir.resolve("absent")))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("ENOENT");
    device = loops.attach(image);
    assertThatThrownBy(() -> mounter.mount(device, plain, "xfs", List.of()))
        .as("no xfs on a blank device")
        .isInstanceOf(MountException.class)
        .hasMessageContaining("EINVAL");
    loops.detach(device);
  }
}

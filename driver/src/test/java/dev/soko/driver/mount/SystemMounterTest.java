package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.sys.Errno;
import dev.soko.driver.sys.FakeSyscalls;
import dev.soko.driver.sys.StatVfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SystemMounterTest {
  @TempDir Path dir;
  final FakeExec exec = new FakeExec();
  final FakeSyscalls sys = new FakeSyscalls();

  private SystemMounter mounter() throws Exception {
    Path table = dir.resolve("mountinfo");
    Files.writeString(table, MountInfoTest.SAMPLE);
    return new SystemMounter(exec, sys, table, dir.resolve("sys-block"));
  }

  /** A stand-in for a loop device: a file holding {@code head} (zero-padded to 64 KiB). */
  private String device(String name, byte[] head) throws Exception {
    Path device = dir.resolve(name);
    Files.write(device, java.util.Arrays.copyOf(head, Superblock.HEAD_BYTES));
    return device.toString();
  }

  /** sysfs' view of a device's size, in 512-byte sectors. */
  private void deviceSize(String name, long bytes) throws Exception {
    Path size = Files.createDirectories(dir.resolve("sys-block").resolve(name)).resolve("size");
    Files.writeString(size, (bytes / 512) + "\n");
  }

  @Test
  void mountsWithFlagBitsAndFilesystemOptionsWithoutAProcess() throws Exception {
    mounter().mount("/dev/loop4", Path.of("/k/s"), "ext4", List.of("noatime,nodev", "discard"));
    mounter().mount("/dev/loop4", Path.of("/k/t"), "xfs", List.of());
    assertThat(sys.calls())
        .containsExactly(
            "mount /dev/loop4 /k/s ext4 0x404 discard", "mount /dev/loop4 /k/t xfs 0x0 nouuid");
    assertThat(exec.calls()).isEmpty();
  }

  @Test
  void refusesUnknownFlagsAndTypesBeforeAnySystemCall() throws Exception {
    SystemMounter mounter = mounter();
    assertThatThrownBy(
            () -> mounter.mount("/dev/loop4", Path.of("/k"), "ext4", List.of("exec,suid")))
        .isInstanceOf(MountException.class)
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.REFUSED_INPUT);
    assertThatThrownBy(() -> mounter.mount("/dev/loop4", Path.of("/k"), "btrfs", List.of()))
        .isInstanceOf(MountException.class);
    assertThat(sys.calls()).isEmpty();
  }

  @Test
  void bindReadOnlyRemountAndUnmount() throws Exception {
    SystemMounter mounter = mounter();
    mounter.bind(Path.of("/k/s"), Path.of("/k/t"));
    // discard took effect at stage; a bind remount carries per-mount flags only
    mounter.remountBind(Path.of("/k/t"), List.of("ro", "discard"));
    mounter.unmount(Path.of("/k/t"));
    assertThat(sys.calls())
        .containsExactly(
            "mount /k/s /k/t - 0x1000 -", // MS_BIND
            "mount none /k/t - 0x1021 -", // MS_BIND | MS_REMOUNT | MS_RDONLY
            "umount2 /k/t 8"); // UMOUNT_NOFOLLOW
  }

  @Test
  void aBindRemountKeepsTheFlagsTheMountAlreadyHas() throws Exception {
    // mountinfo: /var/lib/kubelet/pods/x/mount is "ro,nodev,relatime"
    mounter().remountBind(Path.of("/var/lib/kubelet/pods/x/mount"), List.of("rw", "noexec"));
    assertThat(sys.calls())
        .containsExactly(
            "mount none /var/lib/kubelet/pods/x/mount - 0x20102c -"); // BIND|REMOUNT|NODEV|NOEXEC|RELATIME
  }

  @Test
  void aFailedCallIsInternalAndNamesTheErrno() throws Exception {
    SystemMounter mounter = mounter();
    sys.failOn("umount2", Errno.EBUSY).failOn("mount", Errno.ENOENT);
    assertThatThrownBy(() -> mounter.unmount(Path.of("/k/t")))
        .isInstanceOf(MountException.class)
        .hasMessage("umount2 /k/t 8: EBUSY (Device or resource busy)")
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.FAILED);
    assertThatThrownBy(() -> mounter.bind(Path.of("/k/s"), Path.of("/k/t")))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("ENOENT (No such file or directory)");
  }

  @Test
  void filesystemsTheDriverMakesAreRecognisedWithoutAProcess() throws Exception {
    SystemMounter mounter = mounter();
    assertThat(mounter.detectFilesystem(device("xfs", SuperblockTest.xfs()))).contains("xfs");
    assertThat(mounter.detectFilesystem(device("ext4", SuperblockTest.ext4(8192, 2, 0))))
        .contains("ext4");
    assertThat(mounter.detectFilesystem(device("other", "LVM2 001".getBytes())))
        .contains("unknown");
    assertThat(exec.calls()).as("no blkid for a recognised superblock").isEmpty();
  }

  @Test
  void aDeviceStartingWithZerosIsAskedOfBlkid() throws Exception {
    SystemMounter mounter = mounter();
    String zeros = device("loop1", new byte[0]);
    exec.on(List.of("blkid"), 2, "", "");
    assertThat(mounter.detectFilesystem(zeros)).isEmpty();
    exec.on(List.of("blkid"), 0, "xfs\n", "");
    assertThat(mounter.detectFilesystem(zeros)).contains("xfs");
    exec.on(List.of("blkid"), 0, "\n", "");
    assertThat(mounter.detectFilesystem(zeros)).contains("unknown");
    exec.on(List.of("blkid"), 4, "", "usage");
    assertThatThrownBy(() -> mounter.detectFilesystem(zeros)).isInstanceOf(MountException.class);
  }

  @Test
  void mkfsAndGrowPickTheToolPerFilesystem() throws Exception {
    SystemMounter mounter = mounter();
    mounter.makeFilesystem("/dev/loop1", "xfs");
    mounter.makeFilesystem("/dev/loop2", "ext4");
    mounter.makeFilesystem("/dev/loop3", "ext4", List.of("encrypt"));
    mounter.growFilesystem("/dev/loop1", Path.of("/k/s1"), "xfs");
    mounter.growFilesystem("/dev/loop2", Path.of("/k/s2"), "ext4");
    assertThat(exec.calls().stream().map(c -> String.join(" ", c)))
        .containsExactly(
            "mkfs.xfs -q -s size=4096 /dev/loop1",
            "mkfs.ext4 -q -b 4096 -E lazy_itable_init=1,lazy_journal_init=1 /dev/loop2",
            "mkfs.ext4 -q -b 4096 -E lazy_itable_init=1,lazy_journal_init=1 -O encrypt /dev/loop3",
            "xfs_growfs /k/s1",
            "resize2fs /dev/loop2");
    // 4 KiB units whatever the device: mountable on a direct-I/O device of the pool's block size.
  }

  @Test
  void statsMultiplyBlocksBySizeWithoutAProcess() throws Exception {
    sys.statVfs(new StatVfs(4096, 100, 40, 30, 64, 60));
    FsStats stats = mounter().stats(Path.of("/k/s"));
    assertThat(stats).isEqualTo(new FsStats(409600, 163840, 122880, 64, 60));
    assertThat(stats.usedBytes()).isEqualTo(245760);
    assertThat(stats.usedInodes()).isEqualTo(4);
    assertThat(sys.calls()).containsExactly("statvfs /k/s");
    sys.failOn("statvfs", Errno.ENOENT);
    assertThatThrownBy(() -> mounter().stats(Path.of("/k/s"))).isInstanceOf(MountException.class);
  }

  @Test
  void mountAtPicksTheTopmostMount() throws Exception {
    SystemMounter mounter = mounter();
    assertThat(mounter.mountAt(Path.of("/var/lib/kubelet/pods/x/mount")).orElseThrow().readOnly())
        .isTrue();
    assertThat(mounter.mountAt(Path.of("/nothing"))).isEmpty();
  }

  @Test
  void ext4GrowsOfflineOnlyWhenSmallerThanItsDevice() throws Exception {
    SystemMounter mounter = mounter();
    deviceSize("full", 80L << 20);
    String full = device("full", SuperblockTest.ext4(20480, 2, 0)); // 20480 x 4 KiB = 80 MiB
    assertThat(mounter.growUnmounted(full, "ext4")).isFalse();

    deviceSize("small", 80L << 20);
    String small = device("small", SuperblockTest.ext4(8192, 2, 0)); // 32 MiB on 80 MiB
    exec.on(List.of("e2fsck"), 1, "", "fixed a harmless thing");
    assertThat(mounter.growUnmounted(small, "ext4")).isTrue();
    assertThat(exec.callsOf("resize2fs")).containsExactly("resize2fs " + small);
    assertThat(mounter.growUnmounted(small, "xfs")).isFalse();
    exec.on(List.of("e2fsck"), 4, "", "errors left");
    assertThatThrownBy(() -> mounter.growUnmounted(small, "ext4"))
        .isInstanceOf(MountException.class);
    // Still mounted in a mount namespace the driver cannot see: e2fsck cannot open it exclusively.
    exec.on(List.of("e2fsck"), 8, small + " is in use.\n", "e2fsck: Cannot continue, aborting.\n");
    assertThatThrownBy(() -> mounter.growUnmounted(small, "ext4"))
        .hasMessageContaining("Cannot continue, aborting.")
        .hasMessageContaining(small + " is in use.");
    assertThat(exec.callsOf("resize2fs")).hasSize(1);
    assertThat(exec.callsOf("blockdev")).isEmpty();
    assertThat(exec.callsOf("dumpe2fs")).isEmpty();
  }

  @Test
  void refusedOnlineGrowthIsAPreconditionWithAReason() throws Exception {
    exec.on(List.of("resize2fs"), 1, "", "resize2fs: Permission denied to resize filesystem");
    assertThatThrownBy(() -> mounter().growFilesystem("/dev/loop1", Path.of("/k/s"), "ext4"))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("CAP_SYS_RESOURCE")
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.NOT_PERMITTED);
  }

  @Test
  void refusedOnlineXfsGrowthIsAPreconditionToo() throws Exception {
    exec.on(
        List.of("xfs_growfs"),
        1,
        "",
        "xfs_growfs: XFS_IOC_FSGROWFSDATA xfsctl failed:" + " Operation not permitted");
    assertThatThrownBy(() -> mounter().growFilesystem("/dev/loop1", Path.of("/k/s"), "xfs"))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("CAP_SYS_ADMIN")
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.NOT_PERMITTED);
  }

  /**
   * The backend table says which filesystems the driver makes; the mounter's mkfs and grow commands
   * are a second list of them. A row that formats a filesystem the mounter cannot make or grow, or
   * a filesystem the mounter makes that no row formats, fails here.
   */
  @Test
  void makesAndGrowsExactlyTheFilesystemsTheBackendTableFormats() throws Exception {
    SystemMounter mounter = mounter();
    for (PoolConfig.Backend backend : PoolConfig.Backend.values()) {
      for (String fsType : backend.fsTypes()) {
        if (backend.formatsVolumes()) {
          mounter.makeFilesystem("/dev/loop1", fsType);
          mounter.growFilesystem("/dev/loop1", Path.of("/k/s"), fsType);
        } else {
          assertThatThrownBy(() -> mounter.makeFilesystem("/dev/loop1", fsType))
              .isInstanceOf(MountException.class)
              .hasMessageContaining("is not supported");
        }
      }
    }
    assertThat(exec.calls().stream().filter(c -> c.get(0).startsWith("mkfs.")))
        .map(c -> c.get(0).substring("mkfs.".length()))
        .containsExactlyElementsOf(PoolConfig.Backend.formattedFsTypes());
    assertThat(exec.calls()).hasSize(2 * PoolConfig.Backend.formattedFsTypes().size());
    assertThat(MountOptions.FS_TYPES).isEqualTo(PoolConfig.Backend.formattedFsTypes());
  }
}

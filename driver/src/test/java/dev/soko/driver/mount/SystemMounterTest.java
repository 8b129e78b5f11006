package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.volume.StorageException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SystemMounterTest {
  @TempDir Path dir;
  final FakeExec exec = new FakeExec();

  private SystemMounter mounter() throws Exception {
    Path table = dir.resolve("mountinfo");
    Files.writeString(table, MountInfoTest.SAMPLE);
    return new SystemMounter(exec, table);
  }

  @Test
  void mountsWithCheckedFlagsAndEndOfOptionsMarker() throws Exception {
    mounter().mount("/dev/loop4", Path.of("/k/s"), "ext4", List.of("noatime,nodev"));
    mounter().mount("/dev/loop4", Path.of("/k/t"), "xfs", List.of());
    assertThat(exec.callsOf("mount"))
        .containsExactly(
            "mount -t ext4 -o noatime,nodev -- /dev/loop4 /k/s",
            "mount -t xfs -o nouuid -- /dev/loop4 /k/t");
  }

  @Test
  void refusesUnknownFlagsAndTypesBeforeRunningAnything() throws Exception {
    SystemMounter mounter = mounter();
    assertThatThrownBy(
            () -> mounter.mount("/dev/loop4", Path.of("/k"), "ext4", List.of("exec,suid")))
        .isInstanceOf(StorageException.class);
    assertThatThrownBy(() -> mounter.mount("/dev/loop4", Path.of("/k"), "btrfs", List.of()))
        .isInstanceOf(StorageException.class);
    assertThat(exec.calls()).isEmpty();
  }

  @Test
  void bindAndReadOnlyRemount() throws Exception {
    SystemMounter mounter = mounter();
    mounter.bind(Path.of("/k/s"), Path.of("/k/t"));
    mounter.remountBind(Path.of("/k/t"), List.of("ro"));
    mounter.unmount(Path.of("/k/t"));
    assertThat(exec.calls())
        .containsExactly(
            List.of("mount", "--bind", "--", "/k/s", "/k/t"),
            List.of("mount", "-o", "remount,bind,ro", "--", "/k/t"),
            List.of("umount", "--", "/k/t"));
  }

  @Test
  void blankDetectionFollowsBlkidExitCodes() throws Exception {
    SystemMounter mounter = mounter();
    exec.on(List.of("blkid"), 2, "", "");
    assertThat(mounter.detectFilesystem("/dev/loop1")).isEmpty();
    exec.on(List.of("blkid"), 0, "xfs\n", "");
    assertThat(mounter.detectFilesystem("/dev/loop1")).contains("xfs");
    exec.on(List.of("blkid"), 0, "\n", "");
    assertThat(mounter.detectFilesystem("/dev/loop1")).contains("unknown");
    exec.on(List.of("blkid"), 4, "", "usage");
    assertThatThrownBy(() -> mounter.detectFilesystem("/dev/loop1"))
        .isInstanceOf(StorageException.class);
  }

  @Test
  void mkfsAndGrowPickTheToolPerFilesystem() throws Exception {
    SystemMounter mounter = mounter();
    mounter.makeFilesystem("/dev/loop1", "xfs");
    mounter.makeFilesystem("/dev/loop2", "ext4");
    mounter.growFilesystem("/dev/loop1", Path.of("/k/s1"), "xfs");
    mounter.growFilesystem("/dev/loop2", Path.of("/k/s2"), "ext4");
    assertThat(exec.calls().stream().map(c -> c.get(0) + " " + c.get(c.size() - 1)))
        .containsExactly(
            "mkfs.xfs /dev/loop1",
            "mkfs.ext4 /dev/loop2",
            "xfs_growfs /k/s1",
            "resize2fs /dev/loop2");
  }

  @Test
  void statsMultiplyBlocksBySize() throws Exception {
    exec.on(List.of("stat"), 0, "4096 100 40 30 64 60\n", "");
    FsStats stats = mounter().stats(Path.of("/k/s"));
    assertThat(stats).isEqualTo(new FsStats(409600, 163840, 122880, 64, 60));
    assertThat(stats.usedBytes()).isEqualTo(245760);
    assertThat(stats.usedInodes()).isEqualTo(4);
    exec.on(List.of("stat"), 0, "garbage\n", "");
    assertThatThrownBy(() -> mounter().stats(Path.of("/k/s"))).isInstanceOf(StorageException.class);
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
    exec.on(List.of("blockdev"), 0, "83886080\n", "");
    exec.on(
        List.of("dumpe2fs"),
        0,
        "Block count:              20480\nBlock size:               4096\n",
        "");
    assertThat(mounter.growUnmounted("/dev/loop1", "ext4")).isFalse();
    exec.on(
        List.of("dumpe2fs"),
        0,
        "Block count:              8192\nBlock size:               4096\n",
        "");
    exec.on(List.of("e2fsck"), 1, "", "fixed a harmless thing");
    assertThat(mounter.growUnmounted("/dev/loop1", "ext4")).isTrue();
    assertThat(exec.callsOf("resize2fs")).containsExactly("resize2fs /dev/loop1");
    assertThat(mounter.growUnmounted("/dev/loop1", "xfs")).isFalse();
    exec.on(List.of("e2fsck"), 4, "", "errors left");
    assertThatThrownBy(() -> mounter.growUnmounted("/dev/loop1", "ext4"))
        .isInstanceOf(StorageException.class);
  }

  @Test
  void refusedOnlineGrowthIsAPreconditionWithAReason() throws Exception {
    exec.on(List.of("resize2fs"), 1, "", "resize2fs: Permission denied to resize filesystem");
    assertThatThrownBy(() -> mounter().growFilesystem("/dev/loop1", Path.of("/k/s"), "ext4"))
        .isInstanceOf(StorageException.class)
        .hasMessageContaining("CAP_SYS_RESOURCE")
        .extracting(e -> ((StorageException) e).reason())
        .isEqualTo(StorageException.Reason.FAILED_PRECONDITION);
  }

  @Test
  void refusedOnlineXfsGrowthIsAPreconditionToo() throws Exception {
    exec.on(
        List.of("xfs_growfs"),
        1,
        "",
        "xfs_growfs: XFS_IOC_FSGROWFSDATA xfsctl failed:" + " Operation not permitted");
    assertThatThrownBy(() -> mounter().growFilesystem("/dev/loop1", Path.of("/k/s"), "xfs"))
        .isInstanceOf(StorageException.class)
        .hasMessageContaining("CAP_SYS_ADMIN")
        .extracting(e -> ((StorageException) e).reason())
        .isEqualTo(StorageException.Reason.FAILED_PRECONDITION);
  }
}

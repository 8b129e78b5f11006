package dev.soko.driver.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.mount.FileId;
import dev.soko.driver.mount.MountEntry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The pool checks against a hand-written mount table and device numbers. */
class PoolCheckTest {
  @TempDir Path dir;
  Path pool;
  Path kubelet;
  final List<MountEntry> mounts = new ArrayList<>();
  final Map<Path, Long> devices = new HashMap<>();

  @BeforeEach
  void layout() throws Exception {
    pool = Files.createDirectories(dir.resolve("pool")).toRealPath();
    kubelet = Files.createDirectories(dir.resolve("kubelet/plugins")).getParent().toRealPath();
    devices.put(kubelet.resolve("plugins"), 1L);
  }

  PoolVerdict check(boolean requireMountPoint, boolean allowRoot, Optional<Path> kubeletDir) {
    PoolConfig config =
        new PoolConfig("p", pool, 0, 1.0, Set.of("ext4"), requireMountPoint, allowRoot);
    return new PoolCheck(
            kubeletDir,
            () -> mounts,
            p -> Optional.ofNullable(devices.get(p)).map(d -> new FileId(d, 7)),
            (backend, directory, resolved) -> PoolVerdict.READY)
        .check(config);
  }

  void mount(Path at, String root) {
    mounts.add(
        new MountEntry(
            mounts.size() + 20, 1, "7:3", root, at, List.of("rw"), "xfs", "/dev/loop3", List.of()));
  }

  @Test
  void aPoolOnTheKubeletsFilesystemIsRefusedWithTheReason() {
    devices.put(pool, 1L);
    PoolVerdict verdict = check(false, false, Optional.of(kubelet));
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(verdict.reason())
        .contains(pool.toString())
        .contains("root filesystem")
        .contains("allowRootFilesystem");
  }

  @Test
  void aPoolOnItsOwnFilesystemIsReady() {
    devices.put(pool, 2L);
    assertThat(check(false, false, Optional.of(kubelet))).isEqualTo(PoolVerdict.READY);
  }

  @Test
  void allowRootFilesystemOrNoKubeletDirTurnsTheRootCheckOff() {
    devices.put(pool, 1L);
    assertThat(check(false, true, Optional.of(kubelet))).isEqualTo(PoolVerdict.READY);
    assertThat(check(false, false, Optional.empty())).isEqualTo(PoolVerdict.READY);
  }

  @Test
  void aMissingKubeletPluginsDirRefusesRatherThanGuesses() {
    devices.clear();
    devices.put(pool, 2L);
    PoolVerdict verdict = check(false, false, Optional.of(kubelet));
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(verdict.reason()).contains("cannot tell").contains("plugins");
  }

  @Test
  void aMissingDirectoryIsRefusedAndNotCreated() throws Exception {
    Files.delete(pool);
    PoolVerdict verdict = check(false, true, Optional.empty());
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(verdict.reason()).contains("does not exist");
    assertThat(pool).doesNotExist();
  }

  @Test
  void requireMountPointRefusesADirectoryThatIsNoMountPoint() {
    mount(dir, "/");
    PoolVerdict verdict = check(true, true, Optional.empty());
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(verdict.reason()).contains("not a mount point");
  }

  @Test
  void requireMountPointRefusesABindMountOfASubdirectory() {
    // Inside a container every hostPath is a bind mount: only its root tells a disk's own mount.
    mount(pool, "/pools/fast");
    PoolVerdict verdict = check(true, true, Optional.empty());
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(verdict.reason()).contains("/pools/fast").contains("/dev/loop3");
  }

  @Test
  void requireMountPointAcceptsTheRootOfAFilesystemAndLooksAtTheTopMount() {
    mount(pool, "/pools/fast");
    mount(pool, "/");
    assertThat(check(true, true, Optional.empty())).isEqualTo(PoolVerdict.READY);
    mount(pool, "/sub");
    assertThat(check(true, true, Optional.empty()).state()).isEqualTo(PoolVerdict.State.REFUSED);
  }

  PoolVerdict checkBtrfs(long magic, boolean quotas) throws Exception {
    dev.soko.driver.sys.FakeSyscalls sys =
        new dev.soko.driver.sys.FakeSyscalls().filesystemType(pool.toString(), magic);
    sys.fill("ioctl ", new byte[1024]); // fsid 0000...
    Path sysfs = Files.createDirectories(dir.resolve("sysfs"));
    Path fs = Files.createDirectories(sysfs.resolve("00000000-0000-0000-0000-000000000000"));
    if (quotas) {
      Files.createDirectories(fs.resolve("qgroups"));
    }
    mount(dir, "/");
    PoolConfig config =
        new PoolConfig(
            "fast",
            pool,
            0,
            1.0,
            PoolConfig.Backend.BTRFS_SUBVOLUME.fsTypes(),
            false,
            true,
            Map.of(),
            PoolConfig.Backend.BTRFS_SUBVOLUME);
    var btrfs = new dev.soko.driver.btrfs.Btrfs(new dev.soko.driver.exec.FakeExec(), sys, sysfs);
    var backend = new dev.soko.driver.backend.btrfs.BtrfsSubvolumeBackend(btrfs, () -> mounts);
    return new PoolCheck(
            Optional.empty(),
            () -> mounts,
            p -> Optional.empty(),
            (kind, directory, resolved) -> backend.checkPool(directory, resolved))
        .check(config);
  }

  @Test
  void aBtrfsSubvolumePoolNotOnBtrfsIsRefused() throws Exception {
    PoolVerdict verdict = checkBtrfs(0xEF53L, true);
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(verdict.reason()).contains(pool + " is not on btrfs", "backend=image-file");
  }

  @Test
  void aBtrfsSubvolumePoolWithQuotasOffIsRefusedWithTheCommandThatFixesIt() throws Exception {
    PoolVerdict verdict = checkBtrfs(dev.soko.driver.btrfs.Btrfs.MAGIC, false);
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(verdict.reason())
        .contains("quotas disabled")
        .contains("run 'btrfs quota enable " + dir + "'");
    assertThat(checkBtrfs(dev.soko.driver.btrfs.Btrfs.MAGIC, true)).isEqualTo(PoolVerdict.READY);
  }
}

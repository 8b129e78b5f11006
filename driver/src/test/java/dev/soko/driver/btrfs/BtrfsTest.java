package dev.soko.driver.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.sys.Errno;
import dev.soko.driver.sys.FakeSyscalls;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ioctls and their structures, the sysfs reads and the tool's fallbacks, against fakes. */
class BtrfsTest {
  static final String UUID = "bbd6dd2d-b360-4895-9720-53a95f86fd21";

  @TempDir Path sysfs;
  final FakeExec exec = new FakeExec();
  final FakeSyscalls sys = new FakeSyscalls();

  Btrfs btrfs() {
    byte[] info = new byte[1024];
    System.arraycopy(HexFormat.of().parseHex(UUID.replace("-", "")), 0, info, 16, 16);
    sys.fill("ioctl pool 0x8400941f", info); // FS_INFO of /pool: its fsid
    return new Btrfs(exec, sys, sysfs);
  }

  @Test
  void btrfsIsToldByItsStatfsMagic() {
    sys.filesystemType("/pool", Btrfs.MAGIC);
    assertThat(btrfs().isBtrfs(Path.of("/pool"))).isTrue();
    assertThat(btrfs().isBtrfs(Path.of("/elsewhere"))).as("ext4's magic").isFalse();
  }

  @Test
  void quotasAreEnabledWhenSysfsListsTheFilesystemsQgroups() throws Exception {
    Files.createDirectories(sysfs.resolve(UUID));
    assertThat(btrfs().quotasEnabled(Path.of("/pool"))).isFalse();
    Files.createDirectories(sysfs.resolve(UUID).resolve("qgroups"));
    assertThat(btrfs().quotasEnabled(Path.of("/pool"))).isTrue();
    assertThat(sys.calls()).contains("open /pool 0", "ioctl pool 0x8400941f struct");
    assertThat(sys.openFiles()).as("every descriptor closed").isEmpty();
    assertThat(exec.calls()).as("no process").isEmpty();
  }

  @Test
  void withoutSysfsTheToolTellsWhetherQuotasAreOn() {
    exec.on(
        List.of("btrfs", "qgroup", "show"), 1, "", "ERROR: can't list qgroups: quotas not enabled");
    assertThat(btrfs().quotasEnabled(Path.of("/pool"))).isFalse();
  }

  @Test
  void theSubvolumeIdComesFromInoLookup() {
    byte[] answer = new byte[16];
    ByteBuffer.wrap(answer).order(ByteOrder.nativeOrder()).putLong(0, 258);
    Btrfs btrfs = btrfs();
    sys.fill("ioctl v1 0xd0009412", answer);
    assertThat(btrfs.subvolumeId(Path.of("/pool/volumes/v1"))).isEqualTo(258);
    byte[] asked = sys.structs().get(sys.structs().size() - 1);
    assertThat(ByteBuffer.wrap(asked).order(ByteOrder.nativeOrder()).getLong(8))
        .as("the objectid of a subvolume's root directory")
        .isEqualTo(256);
  }

  @Test
  void aSubvolumeIsCreatedByNameInItsParentDirectoryWithoutAProcess() {
    btrfs().createSubvolume(Path.of("/pool/volumes/v1"));
    assertThat(sys.calls())
        .containsExactly("open /pool/volumes 0", "ioctl volumes 0x5000940e struct");
    assertThat(name(last(), 8)).isEqualTo("v1");
    assertThat(sys.openFiles()).isEmpty();
    assertThat(exec.calls()).isEmpty();
  }

  @Test
  void aDeleteIsByNameOnTheParentAndReturnsTheSubvolumesIdWithoutWaitingForTheCleaner() {
    byte[] answer = new byte[16];
    ByteBuffer.wrap(answer).order(ByteOrder.nativeOrder()).putLong(0, 300);
    Btrfs btrfs = btrfs();
    sys.fill("ioctl v1 0xd0009412", answer);
    assertThat(btrfs.deleteSubvolume(Path.of("/pool/volumes/v1"))).isEqualTo(300);
    assertThat(sys.calls())
        .containsSubsequence("ioctl v1 0xd0009412 struct", "ioctl volumes 0x5000940f struct");
    assertThat(name(last(), 8)).isEqualTo("v1");
    assertThat(sys.openFiles()).isEmpty();
    assertThat(exec.calls()).as("no subvolume sync, no qgroup destroy").isEmpty();
  }

  @Test
  void aSnapshotOrLimitOfWhatIsNoSubvolumeIsRefusedBeforeAnyIoctl(@TempDir Path plain) {
    // A limit with qgroupid 0 acts on the subvolume holding the descriptor: on a plain directory,
    // the pool's own subvolume.
    assertThatThrownBy(() -> btrfs().limit(plain, 1 << 20))
        .extracting(e -> ((BtrfsException) e).kind())
        .isEqualTo(BtrfsException.Kind.SUBVOLUME_MISSING);
    assertThatThrownBy(() -> btrfs().snapshot(plain, plain.resolve("s1"), true))
        .extracting(e -> ((BtrfsException) e).kind())
        .isEqualTo(BtrfsException.Kind.SUBVOLUME_MISSING);
    assertThat(sys.calls()).isEmpty();
  }

  @Test
  void aNameThatIsAPathOrTheDirectoryItselfIsRefusedBeforeTheKernelSeesIt() {
    for (String name : List.of("..", ".")) {
      assertThatThrownBy(() -> btrfs().createSubvolume(Path.of("/pool/volumes/" + name)))
          .isInstanceOf(BtrfsException.class)
          .hasMessageContaining("cannot name a subvolume");
    }
    assertThatThrownBy(() -> btrfs().deleteSubvolume(Path.of("/")))
        .isInstanceOf(BtrfsException.class);
    assertThat(sys.calls()).noneMatch(call -> call.contains("0x5000940"));
  }

  @Test
  void aFailedIoctlIsTypedByItsErrnoAndNamesTheCall() {
    sys.failOn("ioctl volumes 0x5000940e", Errno.EEXIST);
    assertThatThrownBy(() -> btrfs().createSubvolume(Path.of("/pool/volumes/v1")))
        .isInstanceOf(BtrfsException.class)
        .hasMessageContaining("cannot create subvolume /pool/volumes/v1")
        .hasMessageContaining("EEXIST (File exists)")
        .extracting(e -> ((BtrfsException) e).kind())
        .isEqualTo(BtrfsException.Kind.FAILED);
    for (int full : new int[] {Errno.ENOSPC, Errno.EDQUOT}) {
      sys.failOn("ioctl volumes 0x5000940e", full);
      assertThatThrownBy(() -> btrfs().createSubvolume(Path.of("/pool/volumes/v1")))
          .extracting(e -> ((BtrfsException) e).kind())
          .isEqualTo(BtrfsException.Kind.NO_SPACE);
    }
    sys.failOn("ioctl volumes 0x5000940f", Errno.ENOTEMPTY);
    assertThatThrownBy(() -> btrfs().deleteSubvolume(Path.of("/pool/volumes/v1")))
        .hasMessageContaining("ENOTEMPTY");
    assertThat(sys.openFiles()).as("closed on failure too").isEmpty();
  }

  @Test
  void aQgroupIsDestroyedAbsentOrBusyByItsErrno() {
    Path pool = Path.of("/pool");
    assertThat(btrfs().destroyQgroup(pool, 300)).isEqualTo(Btrfs.QgroupDestroyed.DESTROYED);
    ByteBuffer args = ByteBuffer.wrap(last()).order(ByteOrder.nativeOrder());
    assertThat(sys.calls()).endsWith("ioctl pool 0x4010942a struct");
    assertThat(args.getLong(0)).as("create 0: destroy").isZero();
    assertThat(args.getLong(8)).isEqualTo(300);
    sys.failOn("ioctl pool 0x4010942a", Errno.ENOENT);
    assertThat(btrfs().destroyQgroup(pool, 300)).isEqualTo(Btrfs.QgroupDestroyed.ABSENT);
    sys.failOn("ioctl pool 0x4010942a", Errno.EBUSY);
    assertThat(btrfs().destroyQgroup(pool, 300)).isEqualTo(Btrfs.QgroupDestroyed.BUSY);
    sys.failOn("ioctl pool 0x4010942a", Errno.EPERM);
    assertThatThrownBy(() -> btrfs().destroyQgroup(pool, 300)).isInstanceOf(BtrfsException.class);
  }

  @Test
  void aSubvolumeIsDroppedWhenTheRootTreeHasNoItemForIt() {
    Btrfs btrfs = btrfs();
    assertThat(btrfs.subvolumeDropped(Path.of("/pool"), 300))
        .as("the fake leaves nr_items as asked: one found")
        .isFalse();
    byte[] none = IoctlArgs.rootItemSearch(300);
    ByteBuffer.wrap(none).order(ByteOrder.nativeOrder()).putInt(IoctlArgs.SEARCH_NR_ITEMS, 0);
    sys.fill("ioctl pool 0xd0009411", none);
    assertThat(btrfs.subvolumeDropped(Path.of("/pool"), 300)).isTrue();
  }

  @Test
  void theNoCopyOnWriteFlagIsReadFromTheInodesFlags() {
    Btrfs btrfs = btrfs();
    assertThat(btrfs.copyOnWriteDisabled(Path.of("/pool/volumes/v1"))).isFalse();
    byte[] flags = new byte[8];
    ByteBuffer.wrap(flags).order(ByteOrder.nativeOrder()).putInt(0, Btrfs.NOCOW | 0x10);
    sys.fill("ioctl v1 0x80086601", flags);
    assertThat(btrfs.copyOnWriteDisabled(Path.of("/pool/volumes/v1"))).isTrue();
  }

  @Test
  void usageOfTheToolsTableIsTheQgroupsRow() {
    String out =
        """
        Qgroupid    Referenced    Exclusive  Max referenced  Max exclusive   Path
        --------    ----------    ---------  --------------  -------------   ----
        0/5              16384        16384            none           none   <toplevel>
        0/256         10469376     10469376        10485760           none   pool/volumes/v1
        0/2560           12345        12345            none           none   pool/volumes/v2
        """;
    assertThat(Btrfs.parseShow(out, 256)).isEqualTo(new QgroupUsage(10469376, 10485760));
    assertThat(Btrfs.parseShow(out, 2560)).isEqualTo(new QgroupUsage(12345, 0));
    assertThatThrownBy(() -> Btrfs.parseShow(out, 25)).isInstanceOf(BtrfsException.class);
  }

  /** The last structure passed to an ioctl. */
  private byte[] last() {
    return sys.structs().get(sys.structs().size() - 1);
  }

  /** The NUL-terminated name at {@code offset}. */
  private static String name(byte[] struct, int offset) {
    int end = offset;
    while (struct[end] != 0) {
      end++;
    }
    return new String(struct, offset, end - offset, StandardCharsets.UTF_8);
  }
}

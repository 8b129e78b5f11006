package dev.soko.driver.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.sys.FakeSyscalls;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The btrfs tool's command lines, the ioctl structures and the sysfs reads, against fakes. */
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
  void aDeleteWaitsForTheCleanerAndDestroysTheQgroupTheKernelKept() {
    byte[] answer = new byte[16];
    ByteBuffer.wrap(answer).order(ByteOrder.nativeOrder()).putLong(0, 300);
    Btrfs btrfs = btrfs();
    sys.fill("ioctl v1 0xd0009412", answer);
    btrfs.deleteSubvolume(Path.of("/pool/volumes/v1"));
    assertThat(exec.callsOf("btrfs"))
        .containsExactly(
            "btrfs subvolume delete --commit-after /pool/volumes/v1",
            "btrfs subvolume sync /pool/volumes 300",
            "btrfs qgroup destroy 0/300 /pool/volumes");
  }

  @Test
  void aQgroupTheKernelRemovedWithItsSubvolumeIsNoFailureButAnyOtherIs() {
    exec.on(
        List.of("btrfs", "qgroup", "destroy"),
        1,
        "",
        "ERROR: unable to destroy quota group: No such file or directory");
    btrfs().deleteSubvolume(Path.of("/pool/volumes/v1"));

    exec.on(
        List.of("btrfs", "qgroup", "destroy"),
        1,
        "",
        "ERROR: unable to destroy quota group: Device or resource busy");
    assertThatThrownBy(() -> btrfs().deleteSubvolume(Path.of("/pool/volumes/v1")))
        .isInstanceOf(BtrfsException.class)
        .hasMessageContaining("Device or resource busy")
        .extracting(e -> ((BtrfsException) e).kind())
        .isEqualTo(BtrfsException.Kind.FAILED);
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

  @Test
  void aFailingToolIsATypedFailureWithItsMessage() {
    exec.on(List.of("btrfs", "subvolume", "create"), 1, "", "ERROR: cannot create: File exists");
    assertThatThrownBy(() -> btrfs().createSubvolume(Path.of("/pool/volumes/v1")))
        .isInstanceOf(BtrfsException.class)
        .hasMessageContaining("File exists");
  }
}

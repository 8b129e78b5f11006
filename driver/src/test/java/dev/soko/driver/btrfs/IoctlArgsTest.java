package dev.soko.driver.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The byte layout of each ioctl structure (offsets and sizes as linux/btrfs.h has them on LP64,
 * checked once against the header with a C program printing sizeof and offsetof), and that every
 * byte not set is zero: the kernel rejects unknown flags and reads a name up to its NUL.
 */
class IoctlArgsTest {

  @Test
  void volArgsAreAnUnusedFdThenTheNameNulTerminatedIn4096Bytes() {
    byte[] args = IoctlArgs.volArgs("pvc-1");
    assertThat(args).hasSize(4096);
    assertThat(Arrays.copyOfRange(args, 0, 8)).containsOnly(0);
    assertThat(new String(args, 8, 5, StandardCharsets.UTF_8)).isEqualTo("pvc-1");
    assertThat(Arrays.copyOfRange(args, 13, 4096)).containsOnly(0);
  }

  @Test
  void snapshotArgsCarryTheSourceDescriptorTheFlagsAndTheNameAt56() {
    byte[] args = IoctlArgs.snapshotArgs(42, "snap-1", true);
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    assertThat(args).hasSize(4096);
    assertThat(b.getLong(0)).as("fd").isEqualTo(42);
    assertThat(b.getLong(8)).as("transid").isZero();
    assertThat(b.getLong(16)).as("flags: BTRFS_SUBVOL_RDONLY").isEqualTo(2);
    assertThat(Arrays.copyOfRange(args, 24, 56)).as("no qgroup inheritance").containsOnly(0);
    assertThat(new String(args, 56, 6, StandardCharsets.UTF_8)).isEqualTo("snap-1");
    assertThat(Arrays.copyOfRange(args, 62, 4096)).containsOnly(0);
    assertThat(
            ByteBuffer.wrap(IoctlArgs.snapshotArgs(42, "c", false))
                .order(ByteOrder.nativeOrder())
                .getLong(16))
        .as("writable")
        .isZero();
  }

  @Test
  void limitArgsSetOnlyMaxReferencedOnTheDescriptorsOwnQgroup() {
    byte[] args = IoctlArgs.limitArgs(64L << 20);
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    assertThat(args).hasSize(48);
    assertThat(b.getLong(0)).as("qgroupid 0: the fd's subvolume").isZero();
    assertThat(b.getLong(8)).as("lim.flags: BTRFS_QGROUP_LIMIT_MAX_RFER").isEqualTo(1);
    assertThat(b.getLong(16)).as("lim.max_rfer").isEqualTo(64L << 20);
    assertThat(Arrays.copyOfRange(args, 24, 48)).as("max_excl, rsv_rfer, rsv_excl").containsOnly(0);
  }

  @Test
  void destroyQgroupArgsAreCreateZeroAndTheLevel0Id() {
    byte[] args = IoctlArgs.destroyQgroupArgs(261);
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    assertThat(args).hasSize(16);
    assertThat(b.getLong(0)).as("create").isZero();
    assertThat(b.getLong(8)).as("qgroupid 0/261").isEqualTo(261);
  }

  @Test
  void aRootItemSearchAsksTheRootTreeForOneItemOfThatSubvolume() {
    byte[] args = IoctlArgs.rootItemSearch(261);
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    assertThat(args).hasSize(4096);
    assertThat(b.getLong(0)).as("tree_id: the root tree").isEqualTo(1);
    assertThat(b.getLong(8)).as("min_objectid").isEqualTo(261);
    assertThat(b.getLong(16)).as("max_objectid").isEqualTo(261);
    assertThat(b.getLong(24)).as("min_offset").isZero();
    assertThat(b.getLong(32)).as("max_offset").isEqualTo(-1);
    assertThat(b.getLong(40)).as("min_transid").isZero();
    assertThat(b.getLong(48)).as("max_transid").isEqualTo(-1);
    assertThat(b.getInt(56)).as("min_type: ROOT_ITEM").isEqualTo(132);
    assertThat(b.getInt(60)).as("max_type").isEqualTo(132);
    assertThat(b.getInt(64)).as("nr_items").isEqualTo(1);
    assertThat(IoctlArgs.itemsFound(args)).isEqualTo(1);
    assertThat(Arrays.copyOfRange(args, 68, 4096)).containsOnly(0);
  }

  @Test
  void theRequestNumbersAreTheHeadersMacros() {
    // _IOC(dir, 0x94, nr, size) = dir << 30 | size << 16 | 0x94 << 8 | nr; write 1, read 2.
    assertThat(IoctlArgs.IOC_SUBVOL_CREATE).isEqualTo(ioc(1, 14, 4096));
    assertThat(IoctlArgs.IOC_SNAP_DESTROY).isEqualTo(ioc(1, 15, 4096));
    assertThat(IoctlArgs.IOC_TREE_SEARCH).isEqualTo(ioc(3, 17, 4096));
    assertThat(IoctlArgs.IOC_SNAP_CREATE_V2).isEqualTo(ioc(1, 23, 4096));
    assertThat(IoctlArgs.IOC_QGROUP_CREATE).isEqualTo(ioc(1, 42, 16));
    assertThat(IoctlArgs.IOC_QGROUP_LIMIT).isEqualTo(ioc(2, 43, 48));
  }

  @Test
  void aNameMustNameAnEntryOfItsDirectory() {
    for (String bad : List.of("", ".", "..", "a/b", "a\0b", "x".repeat(256))) {
      assertThatThrownBy(() -> IoctlArgs.volArgs(bad))
          .as("'%s'", bad)
          .isInstanceOf(BtrfsException.class);
    }
    assertThat(IoctlArgs.checkedName("x".repeat(255))).hasSize(255);
    assertThat(IoctlArgs.checkedName("..a")).isEqualTo("..a");
  }

  private static long ioc(long dir, long nr, long size) {
    return dir << 30 | size << 16 | 0x94L << 8 | nr;
  }
}

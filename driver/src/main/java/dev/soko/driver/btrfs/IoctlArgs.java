package dev.soko.driver.btrfs;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The argument structures of the btrfs ioctls that change a pool (linux/btrfs.h), laid out as the
 * kernel reads them on LP64 Linux (x86-64 and arm64 alike): little fields first, in native byte
 * order, the rest zero. One builder per structure, so a unit test can check each byte layout.
 */
final class IoctlArgs {
  /** BTRFS_IOC_SUBVOL_CREATE: _IOW(0x94, 14, struct btrfs_ioctl_vol_args), 4096 bytes. */
  static final long IOC_SUBVOL_CREATE = 0x5000940EL;

  /** BTRFS_IOC_SNAP_DESTROY: _IOW(0x94, 15, struct btrfs_ioctl_vol_args), 4096 bytes. */
  static final long IOC_SNAP_DESTROY = 0x5000940FL;

  /** BTRFS_IOC_SNAP_CREATE_V2: _IOW(0x94, 23, struct btrfs_ioctl_vol_args_v2), 4096 bytes. */
  static final long IOC_SNAP_CREATE_V2 = 0x50009417L;

  /** BTRFS_IOC_TREE_SEARCH: _IOWR(0x94, 17, struct btrfs_ioctl_search_args), 4096 bytes. */
  static final long IOC_TREE_SEARCH = 0xD0009411L;

  /** BTRFS_IOC_QGROUP_CREATE: _IOW(0x94, 42, struct btrfs_ioctl_qgroup_create_args), 16 bytes. */
  static final long IOC_QGROUP_CREATE = 0x4010942AL;

  /**
   * BTRFS_IOC_QGROUP_LIMIT: _IOR(0x94, 43, struct btrfs_ioctl_qgroup_limit_args), 48 bytes. The
   * header says _IOR although the kernel only reads the structure.
   */
  static final long IOC_QGROUP_LIMIT = 0x8030942BL;

  /** BTRFS_SUBVOL_RDONLY: btrfs_ioctl_vol_args_v2's flag for a read-only snapshot. */
  static final long SUBVOL_RDONLY = 1L << 1;

  /** BTRFS_QGROUP_LIMIT_MAX_RFER: btrfs_qgroup_limit's max_rfer is set. */
  static final long LIMIT_MAX_RFER = 1L << 0;

  /** BTRFS_VOL_NAME_MAX: the longest name of a directory entry, so of a subvolume. */
  static final int NAME_MAX = 255;

  /** The root tree (BTRFS_ROOT_TREE_OBJECTID), where every subvolume has its ROOT_ITEM. */
  static final long ROOT_TREE = 1;

  /** BTRFS_ROOT_ITEM_KEY: a subvolume's item in the root tree, there until the cleaner drops it. */
  static final int ROOT_ITEM_KEY = 132;

  /** Offset of btrfs_ioctl_search_key's nr_items in btrfs_ioctl_search_args. */
  static final int SEARCH_NR_ITEMS = 64;

  private IoctlArgs() {}

  /** struct btrfs_ioctl_vol_args: __s64 fd (unused here), char name[4088], NUL-terminated. */
  static byte[] volArgs(String name) {
    byte[] args = new byte[4096];
    putName(args, 8, name);
    return args;
  }

  /**
   * struct btrfs_ioctl_vol_args_v2 for a snapshot: __s64 fd (the source subvolume), __u64 transid,
   * __u64 flags, a 32-byte union (qgroup inheritance, unused), then char name[4040] at byte 56.
   */
  static byte[] snapshotArgs(int sourceFd, String name, boolean readOnly) {
    byte[] args = new byte[4096];
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    b.putLong(0, sourceFd);
    b.putLong(16, readOnly ? SUBVOL_RDONLY : 0);
    putName(args, 56, name);
    return args;
  }

  /**
   * struct btrfs_ioctl_qgroup_limit_args: __u64 qgroupid (0: the qgroup of the subvolume the fd is
   * in), then struct btrfs_qgroup_limit {flags, max_rfer, max_excl, rsv_rfer, rsv_excl}.
   */
  static byte[] limitArgs(long maxReferencedBytes) {
    byte[] args = new byte[48];
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    b.putLong(8, LIMIT_MAX_RFER);
    b.putLong(16, maxReferencedBytes);
    return args;
  }

  /**
   * struct btrfs_ioctl_qgroup_create_args with create 0, a destroy: __u64 create, __u64 qgroupid. A
   * level-0 qgroup's ID is its subvolume's ID (level 0 in the top 16 bits).
   */
  static byte[] destroyQgroupArgs(long subvolumeId) {
    byte[] args = new byte[16];
    ByteBuffer.wrap(args).order(ByteOrder.nativeOrder()).putLong(8, subvolumeId);
    return args;
  }

  /**
   * struct btrfs_ioctl_search_args asking the root tree for subvolume {@code id}'s ROOT_ITEM (one
   * item at most): the key's tree_id, min/max objectid, min/max offset, min/max transid, then __u32
   * min_type, max_type, nr_items; the kernel writes the count found back into nr_items.
   */
  static byte[] rootItemSearch(long id) {
    byte[] args = new byte[4096];
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    b.putLong(0, ROOT_TREE);
    b.putLong(8, id);
    b.putLong(16, id);
    b.putLong(24, 0);
    b.putLong(32, -1L); // max offset: any
    b.putLong(40, 0);
    b.putLong(48, -1L); // max transid: any
    b.putInt(56, ROOT_ITEM_KEY);
    b.putInt(60, ROOT_ITEM_KEY);
    b.putInt(SEARCH_NR_ITEMS, 1);
    return args;
  }

  /** The number of items a tree search found. */
  static int itemsFound(byte[] searchArgs) {
    return ByteBuffer.wrap(searchArgs).order(ByteOrder.nativeOrder()).getInt(SEARCH_NR_ITEMS);
  }

  /**
   * The name a subvolume gets in its parent directory. The driver's own IDs only; still, a name the
   * kernel would read as a path or as the directory itself is refused here, not passed on.
   */
  static String checkedName(String name) {
    if (name.isEmpty()
        || name.equals(".")
        || name.equals("..")
        || name.indexOf('/') >= 0
        || name.indexOf('\0') >= 0
        || name.getBytes(StandardCharsets.UTF_8).length > NAME_MAX) {
      throw BtrfsException.of(
          BtrfsException.Kind.FAILED, "'%s' cannot name a subvolume in its directory", name);
    }
    return name;
  }

  private static void putName(byte[] args, int offset, String name) {
    byte[] bytes = checkedName(name).getBytes(StandardCharsets.UTF_8);
    System.arraycopy(bytes, 0, args, offset, bytes.length); // the zeros after it end the string
  }
}

package dev.soko.driver.mount;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The loop driver's ioctl structures ({@code linux/loop.h}), laid out by hand: {@code struct
 * loop_info64} (232 bytes) and {@code struct loop_config} (an fd, a block size, a loop_info64 and
 * reserved space; 304 bytes). Every field the driver leaves zero means: no offset, no size limit
 * and no autoclear (the driver detaches explicitly), read-write, no partition scan. A direct-I/O
 * device gets {@code LO_FLAGS_DIRECT_IO} and an explicit logical block size: left at 0 the kernel
 * would take the backing device's, which may be larger than the filesystem inside allows.
 * LOOP_GET_STATUS64 fills a loop_info64 in; of it the driver reads only the backing file's
 * identity, {@code lo_device} and {@code lo_inode} (the first two u64 fields).
 */
final class LoopStructs {
  static final int INFO64_BYTES = 232;
  static final int CONFIG_BYTES = 304;

  /** LO_NAME_SIZE: lo_file_name holds 63 bytes and a NUL. */
  static final int NAME_SIZE = 64;

  private static final int INFO64_DEVICE = 0;
  private static final int INFO64_INODE = 8;
  private static final int INFO64_FLAGS = 52;
  private static final int INFO64_FILE_NAME = 56;
  private static final int CONFIG_BLOCK_SIZE = 4;
  private static final int CONFIG_INFO = 8;

  /** LO_FLAGS_DIRECT_IO: the device reads and writes its backing file with O_DIRECT. */
  static final int LO_FLAGS_DIRECT_IO = 16;

  private LoopStructs() {}

  /** A loop_info64 for LOOP_SET_STATUS64 that names {@code image}. */
  static byte[] info64(Path image) {
    byte[] info = new byte[INFO64_BYTES];
    putFileName(info, INFO64_FILE_NAME, image);
    return info;
  }

  /**
   * The backing file's identity in a loop_info64 that LOOP_GET_STATUS64 filled in: the kernel's
   * {@code huge_encode_dev} of the file's device is the {@code st_dev} that stat(2) reports.
   */
  static FileId backingFileId(byte[] info) {
    ByteBuffer b = ByteBuffer.wrap(info).order(ByteOrder.nativeOrder());
    return new FileId(b.getLong(INFO64_DEVICE), b.getLong(INFO64_INODE));
  }

  /** A loop_config for LOOP_CONFIGURE: back the device with {@code fd}, named {@code image}. */
  static byte[] config(int fd, Path image) {
    return config(fd, image, 0);
  }

  /**
   * Like {@link #config(int, Path)}; a {@code directIoBlockSize} above 0 asks for direct I/O with
   * that logical block size. The kernel falls back to buffered I/O by itself when the backing file
   * cannot take direct I/O at that size (its device's logical blocks are larger).
   */
  static byte[] config(int fd, Path image, int directIoBlockSize) {
    byte[] config = new byte[CONFIG_BYTES];
    ByteBuffer b = ByteBuffer.wrap(config).order(ByteOrder.nativeOrder()).putInt(0, fd);
    if (directIoBlockSize > 0) {
      b.putInt(CONFIG_BLOCK_SIZE, directIoBlockSize);
      b.putInt(CONFIG_INFO + INFO64_FLAGS, LO_FLAGS_DIRECT_IO);
    }
    putFileName(config, CONFIG_INFO + INFO64_FILE_NAME, image);
    return config;
  }

  /**
   * lo_file_name is informational (what {@code losetup -a} prints); the driver never reads it back.
   * It tells a device's file by {@link #backingFileId}, as the path the kernel shows in sysfs may
   * be relative to a mount that is gone. A longer path is cut to 63 bytes, as losetup does.
   */
  private static void putFileName(byte[] struct, int offset, Path image) {
    byte[] name = image.toString().getBytes(StandardCharsets.UTF_8);
    System.arraycopy(name, 0, struct, offset, Math.min(name.length, NAME_SIZE - 1));
  }
}

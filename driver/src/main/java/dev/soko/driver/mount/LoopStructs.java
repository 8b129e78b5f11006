package dev.soko.driver.mount;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The loop driver's ioctl structures ({@code linux/loop.h}), laid out by hand: {@code struct
 * loop_info64} (232 bytes) and {@code struct loop_config} (an fd, a block size, a loop_info64 and
 * reserved space; 304 bytes). Every field the driver leaves zero means: no offset, no size limit,
 * the backing file's own block size, and {@code lo_flags} 0, that is read-write, no direct I/O, no
 * partition scan and no autoclear (the driver detaches explicitly).
 */
final class LoopStructs {
  static final int INFO64_BYTES = 232;
  static final int CONFIG_BYTES = 304;

  /** LO_NAME_SIZE: lo_file_name holds 63 bytes and a NUL. */
  static final int NAME_SIZE = 64;

  private static final int INFO64_FILE_NAME = 56;
  private static final int CONFIG_INFO = 8;

  private LoopStructs() {}

  /** A loop_info64 for LOOP_SET_STATUS64 that names {@code image}. */
  static byte[] info64(Path image) {
    byte[] info = new byte[INFO64_BYTES];
    putFileName(info, INFO64_FILE_NAME, image);
    return info;
  }

  /** A loop_config for LOOP_CONFIGURE: back the device with {@code fd}, named {@code image}. */
  static byte[] config(int fd, Path image) {
    byte[] config = new byte[CONFIG_BYTES];
    ByteBuffer.wrap(config).order(ByteOrder.nativeOrder()).putInt(0, fd);
    putFileName(config, CONFIG_INFO + INFO64_FILE_NAME, image);
    return config;
  }

  /**
   * lo_file_name is informational (what {@code losetup -a} prints); the kernel's own record of the
   * backing file, which {@link Losetup#list} reads from sysfs, is the full path. A longer path is
   * cut to 63 bytes, as losetup does.
   */
  private static void putFileName(byte[] struct, int offset, Path image) {
    byte[] name = image.toString().getBytes(StandardCharsets.UTF_8);
    System.arraycopy(name, 0, struct, offset, Math.min(name.length, NAME_SIZE - 1));
  }
}

package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class SuperblockTest {
  /** The first bytes of an XFS filesystem: its magic. */
  static byte[] xfs() {
    byte[] head = new byte[512];
    head[0] = 'X';
    head[1] = 'F';
    head[2] = 'S';
    head[3] = 'B';
    return head;
  }

  /**
   * An ext4 superblock at offset 1024 with {@code blocks} blocks of {@code 1024 << logBlockSize}
   * bytes; {@code blocksHigh} fills the upper 32 bits (64bit feature) when non-zero.
   */
  static byte[] ext4(long blocks, int logBlockSize, long blocksHigh) {
    ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(1024 + 0x04, (int) blocks);
    b.putInt(1024 + 0x18, logBlockSize);
    b.putShort(1024 + 0x38, (short) 0xEF53);
    if (blocksHigh != 0) {
      b.putInt(1024 + 0x60, 0x80);
      b.putInt(1024 + 0x150, (int) blocksHigh);
    }
    return b.array();
  }

  @Test
  void recognisesXfsExt4ZerosAndAnythingElse() {
    assertThat(Superblock.of(xfs()).kind()).isEqualTo(Superblock.Kind.XFS);
    assertThat(Superblock.of(ext4(1, 0, 0)).kind()).isEqualTo(Superblock.Kind.EXT4);
    assertThat(Superblock.of(new byte[0]).kind()).isEqualTo(Superblock.Kind.ZEROS);
    byte[] partitionTable = new byte[512];
    partitionTable[510] = 0x55;
    partitionTable[511] = (byte) 0xAA;
    assertThat(Superblock.of(partitionTable).kind()).isEqualTo(Superblock.Kind.OTHER);
  }

  /** An XFS head with the given data and log sector sizes (0: an old filesystem's default). */
  static byte[] xfs(int sectorSize, int logSectorSize) {
    ByteBuffer b = ByteBuffer.wrap(xfs()).order(ByteOrder.BIG_ENDIAN);
    b.putShort(102, (short) sectorSize);
    b.putShort(194, (short) logSectorSize);
    return b.array();
  }

  @Test
  void theSmallestUnitIsExt4sBlockAndXfssSmallerSector() {
    assertThat(Superblock.of(ext4(1, 0, 0)).smallestIo()).contains(1024);
    assertThat(Superblock.of(ext4(1, 2, 0)).smallestIo()).contains(4096);
    assertThat(Superblock.of(xfs(4096, 4096)).smallestIo()).contains(4096);
    assertThat(Superblock.of(xfs(512, 0)).smallestIo()).contains(512);
    assertThat(Superblock.of(xfs(4096, 0)).smallestIo()).as("log sectors of 512").contains(512);
    assertThat(Superblock.of(new byte[0]).smallestIo()).isEmpty();
  }

  @Test
  void ext4SizeIsBlockCountTimesBlockSize() {
    assertThat(Superblock.of(ext4(20480, 2, 0)).ext4Bytes()).contains(20480L * 4096);
    assertThat(Superblock.of(ext4(65536, 0, 0)).ext4Bytes()).contains(65536L * 1024);
    assertThat(Superblock.of(ext4(0, 2, 1)).ext4Bytes()).contains((1L << 32) * 4096);
    assertThat(Superblock.of(ext4(0xFFFFFFFFL, 2, 0)).ext4Bytes()).contains(0xFFFFFFFFL * 4096);
    assertThat(Superblock.of(xfs()).ext4Bytes()).isEmpty();
  }
}

package dev.soko.driver.sys;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class LinuxSyscallsTest {

  private static byte[] statvfs(long bsize, long frsize, long... counts) {
    ByteBuffer b = ByteBuffer.allocate(128).order(ByteOrder.nativeOrder());
    b.putLong(0, bsize).putLong(8, frsize);
    for (int i = 0; i < counts.length; i++) {
      b.putLong(16 + 8 * i, counts[i]);
    }
    return b.array();
  }

  @Test
  void decodesStatvfsInFragmentUnits() {
    StatVfs st = LinuxSyscalls.decodeStatVfs(statvfs(65536, 4096, 100, 40, 30, 64, 60, 59));
    assertThat(st).isEqualTo(new StatVfs(4096, 100, 40, 30, 64, 60));
  }

  @Test
  void aZeroFragmentSizeFallsBackToTheBlockSize() {
    assertThat(LinuxSyscalls.decodeStatVfs(statvfs(1024, 0, 8)).fragmentSize()).isEqualTo(1024);
  }
}

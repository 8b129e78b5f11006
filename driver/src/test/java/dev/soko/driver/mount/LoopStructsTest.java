package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class LoopStructsTest {

  private static String cString(byte[] struct, int offset) {
    int end = offset;
    while (struct[end] != 0) {
      end++;
    }
    return new String(struct, offset, end - offset, StandardCharsets.UTF_8);
  }

  @Test
  void configCarriesTheFdAndTheFileNameAndNothingElse() {
    byte[] config = LoopStructs.config(42, Path.of("/pool/images/vol-a.img"));
    assertThat(config).hasSize(304);
    ByteBuffer b = ByteBuffer.wrap(config).order(ByteOrder.nativeOrder());
    assertThat(b.getInt(0)).as("fd").isEqualTo(42);
    assertThat(b.getInt(4)).as("block_size").isZero();
    assertThat(b.getInt(8 + 52)).as("lo_flags: no autoclear, no direct-io, rw").isZero();
    assertThat(cString(config, 8 + 56)).isEqualTo("/pool/images/vol-a.img");
    byte[] rest = Arrays.copyOfRange(config, 8 + 56 + 64, config.length);
    assertThat(rest).containsOnly(0);
  }

  @Test
  void info64NamesTheFile() {
    byte[] info = LoopStructs.info64(Path.of("/p/v.img"));
    assertThat(info).hasSize(232);
    assertThat(cString(info, 56)).isEqualTo("/p/v.img");
    assertThat(Arrays.copyOfRange(info, 0, 56)).containsOnly(0);
  }

  @Test
  void theBackingFileIsLoDeviceAndLoInode() {
    byte[] info = new byte[232];
    ByteBuffer.wrap(info).order(ByteOrder.nativeOrder()).putLong(0, 0xfe00).putLong(8, 9977975);
    info[56] = '/'; // lo_file_name and the rest do not matter
    assertThat(LoopStructs.backingFileId(info)).isEqualTo(new FileId(0xfe00, 9977975));
  }

  @Test
  void aLongPathIsCutTo63BytesAndStaysTerminated() {
    String longPath = "/" + "d".repeat(200) + "/v.img";
    byte[] info = LoopStructs.info64(Path.of(longPath));
    assertThat(cString(info, 56)).isEqualTo(longPath.substring(0, 63));
    assertThat(info[56 + 63]).isZero();
  }
}

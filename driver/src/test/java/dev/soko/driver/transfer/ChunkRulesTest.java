package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import dev.soko.data.v1.DataProto.Chunk;
import dev.soko.data.v1.DataProto.Entry;
import dev.soko.data.v1.DataProto.FileData;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.volume.StorageException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rules every arriving chunk follows, word for word as an image copy ({@link ChunkCheck}) and a
 * tree copy ({@link TreeWriter}) state them: an empty chunk, one out of order, one whose CRC32C
 * does not match.
 */
class ChunkRulesTest {
  private static final ByteString ABC = ByteString.copyFrom("abc", StandardCharsets.UTF_8);

  @TempDir Path dir;

  @Test
  void anImageCopyStatesEachBrokenRule() {
    ChunkCheck check = new ChunkCheck("snapshot S of node N at E", 10, 0);
    String received = String.format("%08x", crc32c(ABC));

    assertThat(refusal(() -> check.accept(chunk(0, ByteString.EMPTY, 0))))
        .isEqualTo("copy of snapshot S of node N at E failed: a chunk at offset 0 holds 0 bytes");
    assertThat(refusal(() -> check.accept(chunk(8, ABC, crc32c(ABC)))))
        .isEqualTo(
            "copy of snapshot S of node N at E failed: a chunk of 3 bytes at offset 8 is out of"
                + " order or outside the snapshot's 10 bytes");
    assertThat(refusal(() -> check.accept(chunk(0, ABC, 1))))
        .isEqualTo(
            "copy of snapshot S of node N at E failed: the chunk at offset 0 failed its CRC32C"
                + " check (sent 00000001, received data has "
                + received
                + "): it was corrupted on the way");
  }

  @Test
  void aTreeCopyStatesEachBrokenRule() throws Exception {
    String received = String.format("%08x", crc32c(ABC));
    try (TreeWriter writer =
        new TreeWriter(
            "snapshot S of node N at E",
            Files.createDirectories(dir.resolve("t")),
            new LinuxSyscalls())) {
      writer.accept(Entry.newBuilder().setKind(Entry.Kind.DIRECTORY).setMode(0755).build());
      writer.accept(
          Entry.newBuilder()
              .setName("f")
              .setKind(Entry.Kind.REGULAR)
              .setMode(0644)
              .setSizeBytes(10)
              .build());

      assertThat(refusal(() -> writer.accept(data(0, ByteString.EMPTY, 0))))
          .isEqualTo(
              "copy of snapshot S of node N at E refused: a chunk at offset 0 holds 0 bytes");
      assertThat(refusal(() -> writer.accept(data(8, ABC, crc32c(ABC)))))
          .isEqualTo(
              "copy of snapshot S of node N at E refused: a chunk of 3 bytes at offset 8 is out"
                  + " of order or outside its file's 10 bytes");
      assertThat(refusal(() -> writer.accept(data(0, ABC, 1))))
          .isEqualTo(
              "copy of snapshot S of node N at E refused: the chunk at offset 0 of file f failed"
                  + " its CRC32C check (sent 00000001, received data has "
                  + received
                  + "): it was corrupted on the way");
    }
  }

  private static String refusal(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
    return catchThrowableOfType(StorageException.class, call).getMessage();
  }

  private static Chunk chunk(long offset, ByteString data, int crc) {
    return Chunk.newBuilder().setOffset(offset).setData(data).setCrc32C(crc).build();
  }

  private static FileData data(long offset, ByteString data, int crc) {
    return FileData.newBuilder().setOffset(offset).setData(data).setCrc32C(crc).build();
  }

  private static int crc32c(ByteString data) {
    CRC32C crc = new CRC32C();
    crc.update(data.asReadOnlyByteBuffer());
    return (int) crc.getValue();
  }
}

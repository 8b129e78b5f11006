package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import dev.soko.data.v1.DataProto.Entry;
import dev.soko.data.v1.DataProto.FileData;
import dev.soko.data.v1.DataProto.TreeEnd;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The receiving side's checks, on a temporary directory: what a stream may and may not make. */
class TreeWriterTest {
  @TempDir Path dir;

  static final Entry ROOT = Entry.newBuilder().setKind(Entry.Kind.DIRECTORY).setMode(0755).build();

  static Entry entry(long parent, String name, Entry.Kind kind) {
    return Entry.newBuilder().setParent(parent).setName(name).setKind(kind).setMode(0644).build();
  }

  static FileData data(long offset, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    return FileData.newBuilder()
        .setOffset(offset)
        .setData(ByteString.copyFrom(bytes))
        .setCrc32C((int) crc.getValue())
        .build();
  }

  TreeWriter writer() throws IOException {
    return new TreeWriter(
        "snapshot S of node N at E",
        Files.createDirectories(dir.resolve("t")),
        new LinuxSyscalls());
  }

  StorageException refusal(TreeWriter writer, Entry entry) {
    return catchThrowableOfType(StorageException.class, () -> writer.accept(entry));
  }

  @Test
  void aTreeIsWrittenWithItsHolesAndLinksAsSent() throws Exception {
    try (TreeWriter writer = writer()) {
      writer.accept(ROOT);
      writer.accept(entry(0, "d", Entry.Kind.DIRECTORY));
      writer.accept(
          entry(1, "f", Entry.Kind.REGULAR).toBuilder()
              .setSizeBytes(8192)
              .setHasLinks(true)
              .build());
      writer.accept(data(4096, "tail"));
      writer.accept(
          entry(0, "l", Entry.Kind.SYMLINK).toBuilder().setSymlinkTarget("/etc/passwd").build());
      writer.accept(entry(0, "h", Entry.Kind.HARD_LINK).toBuilder().setLinkTo(2).build());
      writer.end(TreeEnd.newBuilder().setEntries(5).setChunks(1).setDataBytes(4).build());
      writer.complete();
    }
    Path t = dir.resolve("t");
    assertThat(Files.size(t.resolve("d/f"))).isEqualTo(8192);
    assertThat(Files.readSymbolicLink(t.resolve("l"))).isEqualTo(Path.of("/etc/passwd"));
    assertThat(Files.isSameFile(t.resolve("h"), t.resolve("d/f"))).isTrue();
    assertThat(Files.getAttribute(t.resolve("d/f"), "unix:mode")).isEqualTo(0100644);
  }

  @Test
  void aCopyWhosePoolLiesBehindALinkIsWritten() throws Exception {
    Files.createDirectories(dir.resolve("real/t"));
    Path via = Files.createSymbolicLink(dir.resolve("via"), dir.resolve("real"));
    try (TreeWriter writer =
        new TreeWriter("snapshot S of node N at E", via.resolve("t"), new LinuxSyscalls())) {
      writer.accept(ROOT);
      writer.accept(entry(0, "d", Entry.Kind.DIRECTORY));
      writer.accept(entry(1, "e", Entry.Kind.DIRECTORY));
      writer.accept(entry(2, "f", Entry.Kind.REGULAR));
      writer.end(TreeEnd.newBuilder().setEntries(4).build());
      writer.complete();
    }
    assertThat(dir.resolve("real/t/d/e/f")).isRegularFile();
  }

  @Test
  void namesThatAreNotOneNameAreRefused() throws Exception {
    for (String name : new String[] {"", ".", "..", "../x", "a/b", "nul\0"}) {
      try (TreeWriter writer = writer()) {
        writer.accept(ROOT);
        StorageException refused = refusal(writer, entry(0, name, Entry.Kind.DIRECTORY));
        assertThat(refused.reason()).as(name).isEqualTo(StorageException.Reason.INTERNAL);
        assertThat(refused.getMessage()).contains("snapshot S of node N at E", "not one name");
      }
      Files.delete(dir.resolve("t"));
    }
  }

  @Test
  void anEntryOutsideADirectoryOrOverAnotherIsRefused() throws Exception {
    try (TreeWriter writer = writer()) {
      writer.accept(ROOT);
      writer.accept(
          entry(0, "l", Entry.Kind.SYMLINK).toBuilder().setSymlinkTarget(dir.toString()).build());
      assertThat(refusal(writer, entry(1, "x", Entry.Kind.REGULAR)).getMessage())
          .contains("not a directory");
      assertThat(refusal(writer, entry(7, "x", Entry.Kind.REGULAR)).getMessage())
          .contains("names entry 7 as its parent");
      assertThat(refusal(writer, entry(0, "l", Entry.Kind.REGULAR)).getMessage())
          .contains("names what an earlier entry made");
      assertThat(
              refusal(writer, entry(0, "h", Entry.Kind.HARD_LINK).toBuilder().setLinkTo(1).build())
                  .getMessage())
          .contains("not an earlier file with other names");
    }
    assertThat(dir.resolve("x")).doesNotExist();
  }

  @Test
  void dataThatIsCorruptOutOfOrderOrUncountedIsRefused() throws Exception {
    try (TreeWriter writer = writer()) {
      writer.accept(ROOT);
      writer.accept(entry(0, "f", Entry.Kind.REGULAR).toBuilder().setSizeBytes(10).build());
      FileData bad = data(0, "abc").toBuilder().setCrc32C(1).build();
      assertThat(catchThrowableOfType(StorageException.class, () -> writer.accept(bad)))
          .hasMessageContaining("CRC32C");
      writer.accept(data(4, "abc"));
      assertThat(catchThrowableOfType(StorageException.class, () -> writer.accept(data(0, "abc"))))
          .hasMessageContaining("out of order");
      assertThat(catchThrowableOfType(StorageException.class, () -> writer.accept(data(8, "abc"))))
          .hasMessageContaining("outside its file's 10 bytes");
      assertThat(
              catchThrowableOfType(
                  StorageException.class,
                  () -> writer.end(TreeEnd.newBuilder().setEntries(2).setChunks(2).build())))
          .hasMessageContaining("counts 2 entries, 2 chunks");
    }
  }

  @Test
  void aStreamThatClosesWithoutItsEndIsIncomplete() throws Exception {
    try (TreeWriter writer = writer()) {
      writer.accept(ROOT);
      assertThat(catchThrowableOfType(StorageException.class, writer::complete))
          .hasMessageContaining("without its end");
    }
  }
}

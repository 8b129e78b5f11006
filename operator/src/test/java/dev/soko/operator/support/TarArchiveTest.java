package dev.soko.operator.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TarArchiveTest {
  private static final Instant TIME = Instant.parse("2026-01-02T03:04:05Z");

  @TempDir Path dir;

  @Test
  void entriesReadBackWithTheirNamesAndBytes() throws IOException {
    Path file = dir.resolve("a.tar.gz");
    try (TarArchive tar = new TarArchive(file, TIME)) {
      tar.add("summary.txt", "hello\n");
      tar.add("empty.txt", new byte[0]);
      tar.add("cluster/StorageCluster/x.yaml", "a".repeat(512));
      tar.add("logs/ns/pod/c.log", "b".repeat(513));
    }
    Map<String, byte[]> entries = Tars.read(file);
    assertThat(entries.keySet())
        .containsExactly(
            "summary.txt", "empty.txt", "cluster/StorageCluster/x.yaml", "logs/ns/pod/c.log");
    assertThat(new String(entries.get("summary.txt"), StandardCharsets.UTF_8)).isEqualTo("hello\n");
    assertThat(entries.get("empty.txt")).isEmpty();
    assertThat(entries.get("cluster/StorageCluster/x.yaml")).hasSize(512);
    assertThat(entries.get("logs/ns/pod/c.log")).hasSize(513);
  }

  @Test
  void aLongNameUsesThePrefixFieldAndAnOverlongOneIsShortenedApart() throws IOException {
    String dirs = "namespaces/" + "n".repeat(63) + "/PersistentVolumeClaim/";
    String fits = dirs + "p".repeat(90) + ".yaml";
    String tooLong1 = dirs + "q".repeat(200) + "-1.yaml";
    String tooLong2 = dirs + "q".repeat(200) + "-2.yaml";
    Path file = dir.resolve("b.tar.gz");
    List<String> stored;
    try (TarArchive tar = new TarArchive(file, TIME)) {
      tar.add(fits, "1");
      tar.add(tooLong1, "2");
      tar.add(tooLong2, "3");
      stored = tar.names();
    }
    assertThat(stored.get(0)).isEqualTo(fits);
    assertThat(stored.get(1)).startsWith(dirs + "qqq").isNotEqualTo(stored.get(2));
    assertThat(stored.get(2)).startsWith(dirs + "qqq");
    assertThat(Tars.read(file).keySet()).containsExactlyElementsOf(stored);
  }

  @Test
  void aLocalFileIsStreamedIn() throws IOException {
    byte[] data = new byte[70_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) i;
    }
    Path local = Files.write(dir.resolve("local.log"), data);
    Path file = dir.resolve("e.tar.gz");
    try (TarArchive tar = new TarArchive(file, TIME)) {
      tar.add("logs/ns/pod/c.log", local);
      tar.add("after.txt", "x");
    }
    Map<String, byte[]> entries = Tars.read(file);
    assertThat(entries.get("logs/ns/pod/c.log")).isEqualTo(data);
    assertThat(entries.get("after.txt")).containsExactly('x');
  }

  @Test
  void aRepeatedNameGetsASuffixInsteadOfOverwriting() throws IOException {
    Path file = dir.resolve("c.tar.gz");
    try (TarArchive tar = new TarArchive(file, TIME)) {
      tar.add("x.yaml", "1");
      assertThat(tar.add("x.yaml", "2")).isEqualTo("x.yaml.2");
    }
    assertThat(Tars.read(file).keySet()).containsExactly("x.yaml", "x.yaml.2");
  }

  @Test
  void gnuTarListsAndExtractsIt() throws Exception {
    String longName = "namespaces/" + "n".repeat(63) + "/ConfigMap/" + "c".repeat(80) + ".yaml";
    Path file = dir.resolve("d.tar.gz");
    try (TarArchive tar = new TarArchive(file, TIME)) {
      tar.add("summary.txt", "hello\n");
      tar.add(longName, "data: 1\n");
    }
    Process list =
        new ProcessBuilder("tar", "-tvzf", file.toString()).redirectErrorStream(true).start();
    String listing = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(list.waitFor()).as(listing).isZero();
    assertThat(listing).contains("summary.txt", longName, "2026-01-02");
    Path out = Files.createDirectory(dir.resolve("x"));
    Process extract =
        new ProcessBuilder("tar", "-xzf", file.toString(), "-C", out.toString())
            .redirectErrorStream(true)
            .start();
    String err = new String(extract.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(extract.waitFor()).as(err).isZero();
    assertThat(Files.readString(out.resolve(longName))).isEqualTo("data: 1\n");
  }
}

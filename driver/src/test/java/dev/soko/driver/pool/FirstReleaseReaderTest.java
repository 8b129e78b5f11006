package dev.soko.driver.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Release 0.1.0's own record code, from its driver jar (the one in its image, which {@code
 * hack/previous-release.sh 0.1.0} builds from its commit into Soko's cache), run on a pool this
 * driver wrote: a volume with IO limits, a group member snapshot and a group. 0.1.0 reads no format
 * number, so what it does with such a pool is what docs/operations.md ("Downgrade") says: it reads
 * every record (none quarantined), keeps the snapshot and the group store as they are, and drops a
 * volume's IO limits the first time it saves that volume's record (its NodeStageVolume's save).
 */
class FirstReleaseReaderTest {
  private static final String VERSION = "0.1.0";
  private static final Instant AT = Instant.parse("2026-12-07T00:00:00Z");

  /**
   * Run by 0.1.0's classes: parses every volume and snapshot record, then saves the volume as
   * 0.1.0's NodeStageVolume does ({@code withStagedAt}).
   */
  private static final String PROBE =
      """
      import dev.soko.driver.state.*;
      import java.nio.file.*;

      public class Probe {
        public static void main(String[] args) {
          Path soko = Path.of(args[0]);
          RecordStore volumes = new RecordStore(soko.resolve("volumes"), Ids::isVolumeId);
          RecordStore snapshots = new RecordStore(soko.resolve("snapshots"), Ids::isSnapshotId);
          for (String id : snapshots.ids()) {
            SnapshotRecord.fromFields(snapshots.read(id).orElseThrow());
          }
          for (String id : volumes.ids()) {
            VolumeRecord r = VolumeRecord.fromFields(volumes.read(id).orElseThrow());
            volumes.write(id, r.withStagedAt("/staging/" + id).toFields());
          }
          System.out.println("read " + volumes.ids().size() + " " + snapshots.ids().size());
          volumes.close();
          snapshots.close();
        }
      }
      """;

  @TempDir Path dir;

  @Test
  void theFirstReleaseReadsThePoolAndDropsIoLimitsWhenItSavesAVolume() throws Exception {
    Path jar = firstReleaseJar();
    Path root = Files.createDirectories(dir.resolve("pool"));
    String volumeId = Ids.newVolumeId();
    String snapshotId = Ids.newSnapshotId();
    String groupId = Ids.newGroupId();
    try (Pool pool = open(root)) {
      pool.volumeRecords()
          .write(
              volumeId,
              new VolumeRecord(
                      volumeId,
                      "pvc-limited",
                      "fast",
                      1 << 20,
                      1 << 20,
                      AccessType.FILESYSTEM,
                      "ext4",
                      ContentSource.EMPTY,
                      AT,
                      RecordState.READY,
                      Map.of("fsType", "ext4"),
                      "",
                      Optional.empty(),
                      Map.of("writeIOPS", "200"))
                  .toFields());
      pool.snapshotRecords()
          .write(
              snapshotId,
              new SnapshotRecord(
                      snapshotId,
                      "member",
                      "fast",
                      volumeId,
                      1 << 20,
                      1 << 20,
                      AccessType.FILESYSTEM,
                      "ext4",
                      AT,
                      RecordState.READY,
                      groupId,
                      Map.of("fsType", "ext4"))
                  .toFields());
      pool.groupRecords()
          .write(
              groupId,
              new GroupSnapshotRecord(
                      groupId,
                      "group",
                      "fast",
                      List.of(volumeId),
                      List.of(snapshotId),
                      AT,
                      RecordState.READY,
                      "")
                  .toFields());
    }
    byte[] group = Files.readAllBytes(root.resolve(".soko/groups/" + groupId + ".json"));
    byte[] snapshot = Files.readAllBytes(root.resolve(".soko/snapshots/" + snapshotId + ".json"));

    assertThat(runProbe(jar, root.resolve(".soko"))).isEqualTo("read 1 1");

    try (Stream<Path> files = Files.walk(root)) {
      assertThat(files.map(Path::toString))
          .as("records 0.1.0 quarantined")
          .noneMatch(p -> p.endsWith(".corrupt"));
    }
    assertThat(root.resolve(".soko/groups/" + groupId + ".json")).hasBinaryContent(group);
    assertThat(root.resolve(".soko/snapshots/" + snapshotId + ".json")).hasBinaryContent(snapshot);
    assertThat(root.resolve(".soko/format")).hasContent(PoolFormat.CURRENT + "\n");
    try (Pool pool = open(root)) {
      VolumeRecord after =
          VolumeRecord.fromFields(pool.volumeRecords().read(volumeId).orElseThrow());
      assertThat(after.stagedAt()).isEqualTo("/staging/" + volumeId);
      assertThat(after.parameters()).isEqualTo(Map.of("fsType", "ext4"));
      assertThat(after.mutableParameters())
          .as("the IO limits, after 0.1.0 saved the volume's record")
          .isEmpty();
      assertThat(
              SnapshotRecord.fromFields(pool.snapshotRecords().read(snapshotId).orElseThrow())
                  .groupId())
          .isEqualTo(groupId);
    }
  }

  private static Pool open(Path root) {
    return Pool.open(
        new PoolConfig("fast", root, 1 << 20, 1.0, Set.of("ext4")),
        new VolumeLayout("images", ".img"),
        new FakeExec());
  }

  /** Runs the probe on 0.1.0's classes in a JVM of its own; returns what it printed. */
  private String runProbe(Path jar, Path sokoDir) throws Exception {
    Path source = dir.resolve("Probe.java");
    Files.writeString(source, PROBE);
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process process =
        new ProcessBuilder(
                java.toString(), "-cp", jar.toString(), source.toString(), sokoDir.toString())
            .redirectErrorStream(true)
            .start();
    assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("the probe ended").isTrue();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as("the probe's exit; it printed: " + out).isZero();
    return out.lines().filter(l -> l.startsWith("read ")).findFirst().orElse(out);
  }

  /**
   * 0.1.0's driver jar, taken out of its image's archive in the release's cache folder; skips the
   * test when the release was never built here.
   */
  private Path firstReleaseJar() throws IOException, InterruptedException {
    Path cache =
        Path.of(
            System.getenv()
                .getOrDefault("SOKO_CACHE", System.getProperty("user.home") + "/.cache/soko"));
    Path releases = cache.resolve("releases");
    Optional<Path> archive = Optional.empty();
    if (Files.isDirectory(releases)) {
      try (Stream<Path> folders = Files.list(releases)) {
        archive =
            folders
                .filter(f -> f.getFileName().toString().startsWith(VERSION + "-"))
                .map(f -> f.resolve("soko-driver-" + VERSION + ".oci.tar"))
                .filter(Files::isRegularFile)
                .findFirst();
      }
    }
    assumeTrue(
        archive.isPresent(),
        "release "
            + VERSION
            + " is not built in "
            + releases
            + " (hack/previous-release.sh "
            + VERSION
            + " builds it)");
    Path image = Files.createDirectories(dir.resolve("image"));
    run(List.of("tar", "-xf", archive.get().toString(), "-C", image.toString()));
    try (Stream<Path> blobs = Files.list(image.resolve("blobs/sha256"))) {
      for (Path blob : blobs.toList()) {
        Path layer = Files.createDirectories(dir.resolve("layer-" + blob.getFileName()));
        // Not every blob is a layer (the manifest, the config): those fail to untar.
        if (run(
                List.of(
                    "tar",
                    "-xf",
                    blob.toString(),
                    "-C",
                    layer.toString(),
                    "opt/soko/soko-driver.jar"))
            == 0) {
          return layer.resolve("opt/soko/soko-driver.jar");
        }
      }
    }
    throw new AssertionError("no layer of " + archive.get() + " holds opt/soko/soko-driver.jar");
  }

  private static int run(List<String> command) throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    return process.waitFor(120, TimeUnit.SECONDS) ? process.exitValue() : -1;
  }
}

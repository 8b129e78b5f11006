package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.block;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.Volume;
import dev.soko.driver.volume.StorageException.Reason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume's point-in-time copy for another node's read: made beside the snapshots under a read
 * copy ID, its size reserved while it exists, removed when its blocks are closed, and removed by
 * recovery when a stop cut the read.
 */
class VolumeReadCopiesTest {
  @TempDir Path dir;

  List<Path> readCopies(EngineFixture f) throws IOException {
    try (Stream<Path> files = Files.list(f.pool.resolve("snapshots"))) {
      return files.filter(p -> p.getFileName().toString().startsWith("readcopy-")).toList();
    }
  }

  @Test
  void aCopyIsTheVolumesBytesReservedWhileItExistsAndRemovedWhenItsBlocksClose() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(block("source", 16 * MIB));
      Files.write(
          f.image(volume.id()), new byte[] {1, 2, 3}, java.nio.file.StandardOpenOption.WRITE);

      VolumeImage facts = engine.volumeSource(volume.id());
      ReadCopy copy = engine.readCopy(volume.id());

      assertThat(facts.sizeBytes()).isEqualTo(16 * MIB);
      assertThat(facts.accessType()).isEqualTo(AccessType.BLOCK);
      assertThat(copy.volume()).isEqualTo(facts);
      assertThat(readCopies(f)).containsExactly(copy.path());
      assertThat(Files.readAllBytes(copy.path())).startsWith(1, 2, 3);
      assertThat(engine.capacity().get(0).availableBytes())
          .as("the volume's and its copy's room")
          .isEqualTo(1024 * MIB - 32 * MIB);

      copy.blocks().close();
      copy.blocks().close(); // a second close changes nothing

      assertThat(readCopies(f)).isEmpty();
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1024 * MIB - 16 * MIB);
      assertThat(engine.listSnapshots(null, "", 0).items()).as("no snapshot recorded").isEmpty();
    }
  }

  @Test
  void aCopyLeftByACrashIsRemovedAtTheNextStart() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    Path left;
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(block("source", 16 * MIB));
      left = engine.readCopy(volume.id()).path(); // never closed: the process dies mid-read
    }
    assertThat(left).exists();
    try (LocalVolumeManager engine = f.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.readCopiesRemoved()).isEqualTo(1);
      assertThat(report.orphanImagesRemoved()).isZero();
      assertThat(left).doesNotExist();
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1024 * MIB - 16 * MIB);
    }
  }

  @Test
  void aVolumeThisNodeDoesNotHoldIsNotFound() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      assertThat(EngineFixture.reason(() -> engine.volumeSource("vol-nonenonenonenonenone")))
          .isEqualTo(Reason.NOT_FOUND);
      assertThat(EngineFixture.reason(() -> engine.readCopy("../../etc/passwd")))
          .isEqualTo(Reason.NOT_FOUND);
    }
  }
}

package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.fs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.model.Volume;
import dev.soko.driver.pool.PoolVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A refused pool: the driver keeps running, offers nothing, takes no new volume, writes nothing;
 * volumes made before the refusal keep working. The temp dir plays the node's root filesystem: the
 * pool and the kubelet's plugins directory are both on it.
 */
class PoolRefusalTest {
  @TempDir Path dir;

  Optional<Path> kubeletOnTheSameFilesystem() throws Exception {
    Path kubelet = dir.resolve("kubelet");
    Files.createDirectories(kubelet.resolve("plugins"));
    return Optional.of(kubelet);
  }

  @Test
  void aPoolOnTheRootFilesystemIsRefusedOffersNothingAndStaysEmpty() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open(kubeletOnTheSameFilesystem(), false)) {
      assertThat(engine.ready()).as("a refused pool does not make the driver unready").isTrue();
      assertThat(engine.poolVerdicts().get("main").state()).isEqualTo(PoolVerdict.State.REFUSED);
      assertThat(engine.capacity()).as("GetCapacity finds no pool: it answers 0").isEmpty();
      StorageException e =
          catchThrowableOfType(
              StorageException.class, () -> engine.createVolume(fs("pvc-a", 20 * MIB)));
      assertThat(e.reason()).isEqualTo(StorageException.Reason.RESOURCE_EXHAUSTED);
      assertThat(e.getMessage())
          .contains("pool main takes no volumes on this node")
          .contains("root filesystem");
    }
    try (Stream<Path> written = Files.list(f.pool)) {
      assertThat(written).as("nothing is written into a refused pool").isEmpty();
    }
  }

  @Test
  void requireMountPointRefusesAPlainDirectory() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open(Optional.empty(), true)) {
      assertThat(engine.poolVerdicts().get("main").reason()).contains("not a mount point");
      assertThat(engine.capacity()).isEmpty();
    }
  }

  @Test
  void volumesMadeBeforeARefusalKeepWorking() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    Volume kept;
    Volume deleted;
    try (LocalVolumeManager engine = f.open()) {
      kept = engine.createVolume(fs("pvc-kept", 20 * MIB));
      deleted = engine.createVolume(fs("pvc-deleted", 20 * MIB));
    }
    try (LocalVolumeManager engine = f.open(kubeletOnTheSameFilesystem(), false)) {
      assertThat(engine.ready()).isTrue();
      assertThat(engine.poolVerdicts().get("main").state()).isEqualTo(PoolVerdict.State.REFUSED);
      assertThat(engine.findVolume(kept.id())).isPresent();
      assertThat(engine.createVolume(fs("pvc-kept", 20 * MIB)).id())
          .as("a repeated CreateVolume still answers with the existing volume")
          .isEqualTo(kept.id());
      engine.deleteVolume(deleted.id());
      assertThat(engine.findVolume(deleted.id())).isEmpty();
      assertThat(f.image(deleted.id())).doesNotExist();
      assertThat(
              catchThrowableOfType(
                      StorageException.class, () -> engine.createVolume(fs("pvc-new", 20 * MIB)))
                  .reason())
          .isEqualTo(StorageException.Reason.RESOURCE_EXHAUSTED);
      assertThat(engine.capacity()).isEmpty();
    }
  }
}

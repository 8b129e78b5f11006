package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.fs;
import static dev.soko.driver.volume.EngineFixture.reason;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.Volume;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.pool.PoolVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pool with a node selector in the engine: judged on the node's labels before its directory is
 * looked at, and again at once when they change; not selected, it offers nothing, takes no new
 * volume and writes nothing, while the volumes it already has keep working.
 */
class PoolSelectionTest {
  static final Map<String, String> NVME = Map.of("soko.dev/disk", "nvme");

  @TempDir Path dir;

  @Test
  void withoutLabelsAPoolWithASelectorIsNotSelectedAndStaysEmpty() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine =
        f.open(NVME, NodeLabels.unknownBecause("no API server access"))) {
      PoolVerdict verdict = engine.poolVerdicts().get("main");
      assertThat(verdict.state()).isEqualTo(PoolVerdict.State.NOT_SELECTED);
      assertThat(verdict.reason()).endsWith("labels are unknown: no API server access");
      assertThat(engine.ready()).as("an unselected pool does not make the driver unready").isTrue();
      assertThat(engine.capacity()).as("GetCapacity finds no pool: it answers 0").isEmpty();
      assertThat(reason(() -> engine.createVolume(fs("pvc-a", 20 * MIB))))
          .isEqualTo(StorageException.Reason.RESOURCE_EXHAUSTED);
    }
    try (Stream<Path> written = Files.list(f.pool)) {
      assertThat(written).as("nothing is written into an unselected pool").isEmpty();
    }
  }

  @Test
  void relabellingTheNodeSelectsThePoolAtOnceAndDeselectingKeepsItsVolumes() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    NodeLabels labels = NodeLabels.unknownBecause("not read yet");
    labels.set(Map.of("soko.dev/disk", "hdd"));
    try (LocalVolumeManager engine = f.open(NVME, labels)) {
      assertThat(engine.poolVerdicts().get("main").reason())
          .isEqualTo(
              "this node does not match the pool's node selector: label soko.dev/disk is 'hdd',"
                  + " not 'nvme'");
      assertThat(engine.capacity()).isEmpty();

      labels.set(Map.of("soko.dev/disk", "nvme", "kubernetes.io/hostname", "node-1"));
      assertThat(engine.poolVerdicts().get("main").ready())
          .as("no wait for the re-check interval")
          .isTrue();
      assertThat(engine.capacity()).singleElement().extracting("pool").isEqualTo("main");
      Volume kept = engine.createVolume(fs("pvc-kept", 20 * MIB));
      Volume deleted = engine.createVolume(fs("pvc-deleted", 20 * MIB));

      labels.set(Map.of("kubernetes.io/hostname", "node-1"));
      assertThat(engine.poolVerdicts().get("main").state())
          .isEqualTo(PoolVerdict.State.NOT_SELECTED);
      assertThat(engine.capacity()).isEmpty();
      assertThat(reason(() -> engine.createVolume(fs("pvc-new", 20 * MIB))))
          .isEqualTo(StorageException.Reason.RESOURCE_EXHAUSTED);
      assertThat(engine.createVolume(fs("pvc-kept", 20 * MIB)).id())
          .as("a repeated CreateVolume still answers with the existing volume")
          .isEqualTo(kept.id());
      assertThat(engine.findVolume(kept.id())).isPresent();
      engine.deleteVolume(deleted.id());
      assertThat(f.image(deleted.id())).doesNotExist();
      assertThat(engine.metricsView().pools())
          .as("the open pool is still reported, with its volume")
          .singleElement()
          .extracting(MetricsView.PoolRow::volumes)
          .isEqualTo(1);
    }
  }
}

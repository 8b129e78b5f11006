package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.reason;
import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.metrics.PrometheusRpcMetrics;
import dev.soko.driver.metrics.StorageGauges;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A pool that claims 8 GiB on a 2 GiB XFS filesystem (a real loop device): logically it has room,
 * physically it fills up. Once the disk is full it takes no new volume, GetCapacity offers only
 * what the disk still has, the gauges say so, and its existing volume stays usable.
 */
class PhysicalCapacityIT {
  private static final long GIB = 1024 * MIB;
  @RegisterExtension static final HostFixture host = new HostFixture();

  private static VolumeRequest block(String name, long bytes) {
    return new VolumeRequest(
        name, bytes, 0, "xfs", AccessType.BLOCK, "", ContentSource.EMPTY, Map.of());
  }

  private static long headroom(VolumeManager engine) {
    return engine.capacity().stream()
        .filter(c -> c.pool().equals("xfs"))
        .findFirst()
        .orElseThrow()
        .availableBytes();
  }

  @Test
  void aPhysicallyFullPoolTakesNoNewVolumeAndSaysSo() throws Exception {
    try (LocalVolumeManager engine = LocalVolumeManager.open(host.config(8 * GIB))) {
      Volume kept = engine.createVolume(block("kept", 64 * MIB));
      long before = headroom(engine);
      assertThat(before).as("limited by the 2 GiB disk, not the 8 GiB claim").isLessThan(2 * GIB);

      // Fill the filesystem for real: fallocate reserves blocks, as data written into images does.
      long free = Files.getFileStore(host.xfsPool).getUsableSpace();
      Path filler = host.xfsPool.resolve("filler");
      host.exec.check(
          List.of("fallocate", "-l", Long.toString(free - 16 * MIB), filler.toString()), Exec.LONG);
      long full = headroom(engine);
      assertThat(full).as("read again, not remembered from the start").isLessThan(32 * MIB);
      assertThat(reason(() -> engine.createVolume(block("refused", 64 * MIB))))
          .isEqualTo(StorageException.Reason.RESOURCE_EXHAUSTED);
      assertThatThrownBy(() -> engine.createVolume(block("refused", 64 * MIB)))
          .hasMessageContaining("its filesystem has only");
      // The existing volume is still there and still reported healthy.
      assertThat(engine.findVolume(kept.id())).isPresent();

      PrometheusRpcMetrics metrics = new PrometheusRpcMetrics();
      StorageGauges gauges = new StorageGauges(metrics.registry(), "node-it", engine::metricsView);
      metrics.beforeScrape(gauges::refresh);
      String scrape = metrics.scrape();
      assertThat(scrape)
          .contains("soko_pool_capacity_bytes{node=\"node-it\",pool=\"xfs\"} 8.589934592E9")
          .contains("soko_pool_provisioned_bytes{node=\"node-it\",pool=\"xfs\"} 6.7108864E7")
          .contains("soko_pool_volumes{node=\"node-it\",pool=\"xfs\"} 1.0")
          .contains(
              "soko_volume_condition_abnormal{node=\"node-it\",pool=\"xfs\",volume=\""
                  + kept.id()
                  + "\"} 0.0");
      assertThat(gauge(scrape, "soko_pool_headroom_bytes")).isLessThan(32.0 * MIB);
      assertThat(gauge(scrape, "soko_pool_used_bytes") / gauge(scrape, "soko_pool_size_bytes"))
          .isGreaterThan(0.98);

      Files.delete(filler);
      // XFS frees a deleted file's blocks in the background (deferred inode inactivation).
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (headroom(engine) < GIB && System.nanoTime() < deadline) {
        host.exec.check(List.of("sync", "-f", host.xfsPool.toString()), Exec.LONG);
        Thread.sleep(100);
      }
      assertThat(headroom(engine)).isGreaterThan(GIB);
      engine.deleteVolume(engine.createVolume(block("fits-again", 64 * MIB)).id());
      engine.deleteVolume(kept.id());
    }
  }

  private static double gauge(String scrape, String name) {
    String prefix = name + "{node=\"node-it\",pool=\"xfs\"} ";
    return scrape
        .lines()
        .filter(l -> l.startsWith(prefix))
        .mapToDouble(l -> Double.parseDouble(l.substring(prefix.length())))
        .findFirst()
        .orElseThrow(() -> new AssertionError(name + " missing in:\n" + scrape));
  }
}

package dev.soko.driver.volume;

import dev.soko.driver.pool.PoolReport;
import java.util.List;

/**
 * What the metrics endpoint exports about storage, read fresh for each scrape.
 *
 * @param pools one row per usable pool
 * @param volumes one row per complete volume
 */
public record MetricsView(List<PoolRow> pools, List<VolumeRow> volumes) {
  public static final MetricsView EMPTY = new MetricsView(List.of(), List.of());

  /**
   * @param volumes complete volumes in the pool
   * @param snapshots complete snapshots in the pool
   */
  public record PoolRow(PoolReport report, int volumes, int snapshots) {}

  /**
   * @param abnormal the CSI volume condition (what NodeGetVolumeStats and ListVolumes report)
   */
  public record VolumeRow(String volume, String pool, long capacityBytes, boolean abnormal) {}
}

package dev.soko.driver.metrics;

import dev.soko.driver.pool.PoolReport;
import dev.soko.driver.volume.MetricsView;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pool and volume gauges, labelled {@code pool} and {@code node}, read fresh before every scrape
 * (one statfs per pool, one look at loop devices and mounts) so they never lag the disk. Rows of
 * deleted volumes disappear with the next scrape. The alert rules and the dashboard in {@code
 * helm/soko/files/monitoring/} name these series; PrometheusMonitoringIT checks that they exist.
 */
public final class StorageGauges {
  private static final Logger LOG = LoggerFactory.getLogger(StorageGauges.class);

  private final String node;
  private final Supplier<MetricsView> source;
  private final List<PoolGauge> pools;
  private final MultiGauge volumeCapacity;
  private final MultiGauge volumeAbnormal;

  private record PoolGauge(MultiGauge gauge, ToDoubleFunction<MetricsView.PoolRow> value) {}

  public StorageGauges(MeterRegistry registry, String node, Supplier<MetricsView> source) {
    this.node = node;
    this.source = source;
    this.pools =
        List.of(
            bytes(
                registry,
                "soko.pool.size",
                "Size of the pool's filesystem (statfs)",
                r -> r.report().usage().sizeBytes()),
            bytes(
                registry,
                "soko.pool.used",
                "Bytes used on the pool's filesystem, by anyone (statfs)",
                r -> r.report().usage().usedBytes()),
            bytes(
                registry,
                "soko.pool.available",
                "Bytes still free for the driver on the pool's filesystem (statfs f_bavail)",
                r -> r.report().usage().availableBytes()),
            bytes(
                registry,
                "soko.pool.capacity",
                "Logical capacity: the pool's size times its over-provisioning ratio",
                r -> r.report().totalBytes()),
            bytes(
                registry,
                "soko.pool.provisioned",
                "Sum of the sizes of the pool's volumes and snapshots",
                r -> r.report().provisionedBytes()),
            bytes(
                registry,
                "soko.pool.headroom",
                "What GetCapacity offers: the lower of logical headroom and physical free space",
                r -> r.report().headroomBytes()),
            count(registry, "soko.pool.volumes", "Volumes in the pool", r -> r.volumes()),
            count(registry, "soko.pool.snapshots", "Snapshots in the pool", r -> r.snapshots()));
    this.volumeCapacity =
        MultiGauge.builder("soko.volume.capacity")
            .description("Provisioned size of a volume")
            .baseUnit(BaseUnits.BYTES)
            .register(registry);
    this.volumeAbnormal =
        MultiGauge.builder("soko.volume.condition.abnormal")
            .description("1 when the volume's CSI condition is abnormal (see NodeGetVolumeStats)")
            .register(registry);
  }

  private static PoolGauge bytes(
      MeterRegistry registry,
      String name,
      String help,
      ToDoubleFunction<MetricsView.PoolRow> value) {
    return new PoolGauge(
        MultiGauge.builder(name).description(help).baseUnit(BaseUnits.BYTES).register(registry),
        value);
  }

  private static PoolGauge count(
      MeterRegistry registry,
      String name,
      String help,
      ToDoubleFunction<MetricsView.PoolRow> value) {
    return new PoolGauge(MultiGauge.builder(name).description(help).register(registry), value);
  }

  /** Reads the pools and volumes now and replaces every row. */
  public void refresh() {
    MetricsView view;
    try {
      view = source.get();
    } catch (RuntimeException e) {
      // A scrape must still answer (RPC metrics, the rest); the gauges keep their last rows.
      LOG.warn("cannot read pools for the metrics: {}", e.getMessage());
      return;
    }
    for (PoolGauge pool : pools) {
      pool.gauge()
          .register(
              rows(view.pools(), r -> poolTags(r.report()), pool.value()::applyAsDouble), true);
    }
    volumeCapacity.register(
        rows(view.volumes(), this::volumeTags, v -> (double) v.capacityBytes()), true);
    volumeAbnormal.register(
        rows(view.volumes(), this::volumeTags, v -> v.abnormal() ? 1.0 : 0.0), true);
  }

  private Tags poolTags(PoolReport report) {
    return Tags.of("pool", report.pool(), "node", node);
  }

  private Tags volumeTags(MetricsView.VolumeRow volume) {
    return Tags.of("volume", volume.volume(), "pool", volume.pool(), "node", node);
  }

  private static <T> List<MultiGauge.Row<?>> rows(
      List<T> items, Function<T, Tags> tags, Function<T, Double> value) {
    return items.stream()
        .<MultiGauge.Row<?>>map(item -> MultiGauge.Row.of(tags.apply(item), value.apply(item)))
        .toList();
  }
}

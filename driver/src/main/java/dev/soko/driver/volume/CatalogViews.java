package dev.soko.driver.volume;

import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the catalog shows without changing it: ready volumes and snapshots one by one or in pages,
 * and the counts the metrics read. Records that are still being created or deleted are never shown,
 * and each answer takes one {@link Health.View}, so a page's conditions agree.
 */
final class CatalogViews {
  private final Catalog catalog;
  private final Health health;
  private final SnapshotProvisioner snapshots;

  CatalogViews(Catalog catalog, Health health, SnapshotProvisioner snapshots) {
    this.catalog = catalog;
    this.health = health;
    this.snapshots = snapshots;
  }

  Optional<Volume> findVolume(String volumeId) {
    return catalog
        .volume(volumeId)
        .filter(r -> r.state() == RecordState.READY)
        .map(r -> r.toVolume(health.view().condition(r)));
  }

  Page<Volume> listVolumes(String startingToken, int maxEntries) {
    TreeMap<String, VolumeRecord> ready = new TreeMap<>();
    catalog.volumes().values().stream()
        .filter(v -> v.state() == RecordState.READY)
        .forEach(v -> ready.put(v.id(), v));
    Page<VolumeRecord> page = Paging.page(ready, startingToken, maxEntries, Ids::isVolumeId);
    Health.View view = health.view();
    return new Page<>(
        page.items().stream().map(r -> r.toVolume(view.condition(r))).toList(), page.nextToken());
  }

  Page<Snapshot> listSnapshots(SnapshotFilter filter, String startingToken, int maxEntries) {
    SnapshotFilter f = filter == null ? SnapshotFilter.ALL : filter;
    TreeMap<String, SnapshotRecord> matching = new TreeMap<>();
    catalog.snapshots().values().stream()
        .filter(s -> s.state() == RecordState.READY)
        .filter(s -> f.snapshotId().isEmpty() || s.id().equals(f.snapshotId()))
        .filter(s -> f.sourceVolumeId().isEmpty() || s.sourceVolumeId().equals(f.sourceVolumeId()))
        .forEach(s -> matching.put(s.id(), s));
    Page<SnapshotRecord> page = Paging.page(matching, startingToken, maxEntries, Ids::isSnapshotId);
    return new Page<>(page.items().stream().map(snapshots::describe).toList(), page.nextToken());
  }

  MetricsView metricsView() {
    Map<String, Integer> volumeCounts = new HashMap<>();
    Map<String, Integer> snapshotCounts = new HashMap<>();
    Health.View view = health.view();
    List<MetricsView.VolumeRow> volumeRows = new ArrayList<>();
    for (VolumeRecord r : catalog.volumes().values()) {
      if (r.state() == RecordState.READY) {
        volumeCounts.merge(r.pool(), 1, Integer::sum);
        volumeRows.add(
            new MetricsView.VolumeRow(
                r.id(), r.pool(), r.capacityBytes(), view.condition(r).abnormal()));
      }
    }
    catalog.snapshots().values().stream()
        .filter(s -> s.state() == RecordState.READY)
        .forEach(s -> snapshotCounts.merge(s.pool(), 1, Integer::sum));
    List<MetricsView.PoolRow> poolRows =
        catalog.pools().stream()
            .map(
                p ->
                    new MetricsView.PoolRow(
                        p.report(),
                        volumeCounts.getOrDefault(p.name(), 0),
                        snapshotCounts.getOrDefault(p.name(), 0)))
            .toList();
    return new MetricsView(poolRows, volumeRows);
  }
}

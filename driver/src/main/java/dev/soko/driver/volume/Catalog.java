package dev.soko.driver.volume;

import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The engine's view of every pool's records: an in-memory, ID-sorted index kept in step with the
 * records on disk. Writes go to disk first (atomically) and then to the index, so the index never
 * claims more than the disk holds.
 */
final class Catalog {
  private final Map<String, Pool> pools = new ConcurrentHashMap<>();
  private final List<String> order;
  private final ConcurrentSkipListMap<String, VolumeRecord> volumes = new ConcurrentSkipListMap<>();
  private final ConcurrentSkipListMap<String, SnapshotRecord> snapshots =
      new ConcurrentSkipListMap<>();
  private final Map<String, GroupSnapshotRecord> groups = new ConcurrentHashMap<>();
  // Names index the same records: every create looks its name up.
  private final Map<String, VolumeRecord> volumesByName = new ConcurrentHashMap<>();
  private final Map<String, SnapshotRecord> snapshotsByName = new ConcurrentHashMap<>();
  private final Map<String, GroupSnapshotRecord> groupsByName = new ConcurrentHashMap<>();

  /**
   * @param poolNames the configured pools in order; the first is the default pool
   */
  Catalog(List<String> poolNames) {
    this.order = List.copyOf(poolNames);
  }

  /** Makes an opened (and recovered) pool available; pools may arrive late, in any order. */
  void addPool(Pool pool) {
    pools.put(pool.name(), pool);
  }

  /** The usable pools, in configuration order. */
  List<Pool> pools() {
    return order.stream().map(pools::get).filter(Objects::nonNull).toList();
  }

  /** The named pool, or the first (default) one for an empty name. */
  Pool pool(String name) {
    String wanted = name == null || name.isEmpty() ? (order.isEmpty() ? "" : order.get(0)) : name;
    if (!order.contains(wanted)) {
      if (order.isEmpty()) {
        throw new StorageException(
            StorageException.Reason.UNAVAILABLE, "this driver instance has no storage pool");
      }
      throw StorageException.invalid(
          "unknown pool %s (this node has %s)", Catalog.shown(name), order);
    }
    Pool pool = pools.get(wanted);
    if (pool == null) {
      throw new StorageException(
          StorageException.Reason.UNAVAILABLE, "pool " + wanted + " is not usable yet");
    }
    return pool;
  }

  // ---- volumes ---------------------------------------------------------------------------

  Optional<VolumeRecord> volume(String id) {
    return Ids.isVolumeId(id) ? Optional.ofNullable(volumes.get(id)) : Optional.empty();
  }

  /** A volume that exists and is complete, or NOT_FOUND. */
  VolumeRecord readyVolume(String id) {
    return volume(id)
        .filter(v -> v.state() == dev.soko.driver.state.RecordState.READY)
        .orElseThrow(() -> StorageException.notFound("volume %s does not exist", shown(id)));
  }

  Optional<VolumeRecord> volumeByName(String name) {
    return Optional.ofNullable(volumesByName.get(name));
  }

  NavigableMap<String, VolumeRecord> volumes() {
    return volumes;
  }

  void saveVolume(VolumeRecord record) {
    pool(record.pool()).volumeRecords().write(record.id(), record.toFields());
    loadVolume(record);
  }

  void forgetVolume(VolumeRecord record) {
    pool(record.pool()).volumeRecords().delete(record.id());
    volumes.remove(record.id());
    volumesByName.computeIfPresent(record.name(), (n, v) -> v.id().equals(record.id()) ? null : v);
  }

  /** Indexes a record (read from disk at start-up, or just written). */
  void loadVolume(VolumeRecord record) {
    volumes.put(record.id(), record);
    volumesByName.put(record.name(), record);
  }

  Path location(VolumeRecord record) {
    return pool(record.pool()).volumeLocation(record.id());
  }

  // ---- snapshots -------------------------------------------------------------------------

  Optional<SnapshotRecord> snapshot(String id) {
    return Ids.isSnapshotId(id) ? Optional.ofNullable(snapshots.get(id)) : Optional.empty();
  }

  Optional<SnapshotRecord> snapshotByName(String name) {
    return Optional.ofNullable(snapshotsByName.get(name));
  }

  NavigableMap<String, SnapshotRecord> snapshots() {
    return snapshots;
  }

  void saveSnapshot(SnapshotRecord record) {
    pool(record.pool()).snapshotRecords().write(record.id(), record.toFields());
    loadSnapshot(record);
  }

  void forgetSnapshot(SnapshotRecord record) {
    pool(record.pool()).snapshotRecords().delete(record.id());
    snapshots.remove(record.id());
    snapshotsByName.computeIfPresent(
        record.name(), (n, s) -> s.id().equals(record.id()) ? null : s);
  }

  /** Indexes a record (read from disk at start-up, or just written). */
  void loadSnapshot(SnapshotRecord record) {
    snapshots.put(record.id(), record);
    snapshotsByName.put(record.name(), record);
  }

  Path location(SnapshotRecord record) {
    return pool(record.pool()).snapshotLocation(record.id());
  }

  // ---- volume group snapshots ------------------------------------------------------------

  Optional<GroupSnapshotRecord> group(String id) {
    return Ids.isGroupId(id) ? Optional.ofNullable(groups.get(id)) : Optional.empty();
  }

  Optional<GroupSnapshotRecord> groupByName(String name) {
    return Optional.ofNullable(groupsByName.get(name));
  }

  void saveGroup(GroupSnapshotRecord record) {
    pool(record.pool()).groupRecords().write(record.id(), record.toFields());
    loadGroup(record);
  }

  void forgetGroup(GroupSnapshotRecord record) {
    pool(record.pool()).groupRecords().delete(record.id());
    groups.remove(record.id());
    groupsByName.computeIfPresent(record.name(), (n, g) -> g.id().equals(record.id()) ? null : g);
  }

  /** Indexes a record (read from disk at start-up, or just written). */
  void loadGroup(GroupSnapshotRecord record) {
    groups.put(record.id(), record);
    groupsByName.put(record.name(), record);
  }

  /** An ID from a request, safe to echo in an error message. */
  static String shown(String id) {
    if (id == null) {
      return "\"\"";
    }
    String cut = id.length() > 64 ? id.substring(0, 64) + "..." : id;
    return "\"" + cut.replaceAll("\\p{Cntrl}", "?") + "\"";
  }
}

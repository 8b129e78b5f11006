package dev.soko.driver.testing;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.PoolCapacity;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.ExpandResult;
import dev.soko.driver.volume.Page;
import dev.soko.driver.volume.PublishRequest;
import dev.soko.driver.volume.SnapshotFilter;
import dev.soko.driver.volume.SnapshotImage;
import dev.soko.driver.volume.StageRequest;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeManager;
import dev.soko.driver.volume.VolumeRequest;
import dev.soko.driver.volume.VolumeUsage;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory engine for service tests: volumes and snapshots in sorted maps, the last request of
 * each kind remembered, and a one-shot failure that the next call throws.
 */
public final class FakeVolumeManager implements VolumeManager {
  public final Map<String, Volume> volumes = new TreeMap<>();
  public final Map<String, Snapshot> snapshots = new TreeMap<>();
  public final Map<String, GroupSnapshot> groups = new TreeMap<>();
  public List<PoolCapacity> capacities = new ArrayList<>();
  public VolumeUsage usage = new VolumeUsage(1000, 100, 900, 64, 10, 54, VolumeCondition.HEALTHY);
  public boolean ready = true;
  public boolean closed;
  public int maxVolumes = 7;
  public RuntimeException nextFailure;

  public VolumeRequest lastCreate;
  public StageRequest lastStage;
  public PublishRequest lastPublish;
  public String lastListToken;
  public int lastListMax = -1;
  public SnapshotFilter lastSnapshotFilter;
  public Map<String, String> lastModify;

  /** The StorageClass parameters its per-volume attributes own; none unless a test sets some. */
  public List<String> attributeParameters = List.of();

  public long[] lastExpand;
  public boolean expandNowLeavesNodeWork;
  public Path lastPath;
  public String lastGroupName;
  public List<String> lastGroupSources;
  public List<String> lastGroupMembers;

  private final AtomicInteger ids = new AtomicInteger();

  /** Holds {@code ids}: ext4 filesystem volumes of 1 MiB in pool "fast". */
  public FakeVolumeManager holding(String... ids) {
    for (String id : ids) {
      volumes.put(
          id,
          new Volume(
              id,
              "pvc-" + id,
              "fast",
              1 << 20,
              AccessType.FILESYSTEM,
              "ext4",
              ContentSource.EMPTY,
              Instant.EPOCH,
              VolumeCondition.HEALTHY));
    }
    return this;
  }

  private void maybeFail() {
    RuntimeException failure = nextFailure;
    nextFailure = null;
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public Optional<String> notReady() {
    return ready ? Optional.empty() : Optional.of("fake engine told not to be ready");
  }

  @Override
  public Volume createVolume(VolumeRequest request) {
    maybeFail();
    lastCreate = request;
    for (Volume existing : volumes.values()) {
      if (existing.name().equals(request.name())) {
        return existing;
      }
    }
    String id = "vol-" + ids.incrementAndGet();
    Volume volume =
        new Volume(
            id,
            request.name(),
            request.pool().isEmpty() ? "default" : request.pool(),
            Math.max(request.requiredBytes(), 1 << 20),
            request.accessType(),
            request.fsType(),
            request.source(),
            Instant.ofEpochSecond(1_700_000_000L),
            VolumeCondition.HEALTHY);
    volumes.put(id, volume);
    return volume;
  }

  @Override
  public void deleteVolume(String volumeId) {
    maybeFail();
    volumes.remove(volumeId);
  }

  @Override
  public Optional<Volume> findVolume(String volumeId) {
    maybeFail();
    return Optional.ofNullable(volumes.get(volumeId));
  }

  @Override
  public Page<Volume> listVolumes(String startingToken, int maxEntries) {
    maybeFail();
    lastListToken = startingToken;
    lastListMax = maxEntries;
    return page(new ArrayList<>(volumes.values()), startingToken, maxEntries);
  }

  private static <T> Page<T> page(List<T> all, String token, int max) {
    int start;
    try {
      start = token.isEmpty() ? 0 : Integer.parseInt(token);
    } catch (NumberFormatException e) {
      throw new StorageException(StorageException.Reason.ABORTED, "bad token");
    }
    int end = max == 0 ? all.size() : Math.min(all.size(), start + max);
    return new Page<>(all.subList(start, end), end < all.size() ? String.valueOf(end) : "");
  }

  @Override
  public Snapshot createSnapshot(String name, String sourceVolumeId) {
    maybeFail();
    return snapshotOf(name, sourceVolumeId, "");
  }

  private Snapshot snapshotOf(String name, String sourceVolumeId, String groupId) {
    Volume source = volumes.get(sourceVolumeId);
    if (source == null) {
      throw StorageException.notFound("volume %s", sourceVolumeId);
    }
    String id = "snap-" + ids.incrementAndGet();
    Snapshot snapshot =
        new Snapshot(
            id,
            name,
            sourceVolumeId,
            source.capacityBytes(),
            Instant.ofEpochSecond(5, 7),
            true,
            groupId);
    snapshots.put(id, snapshot);
    return snapshot;
  }

  @Override
  public void deleteSnapshot(String snapshotId) {
    maybeFail();
    snapshots.remove(snapshotId);
  }

  @Override
  public Page<Snapshot> listSnapshots(SnapshotFilter filter, String startingToken, int maxEntries) {
    maybeFail();
    lastSnapshotFilter = filter;
    List<Snapshot> matching =
        snapshots.values().stream()
            .filter(s -> filter.snapshotId().isEmpty() || s.id().equals(filter.snapshotId()))
            .filter(
                s ->
                    filter.sourceVolumeId().isEmpty()
                        || s.sourceVolumeId().equals(filter.sourceVolumeId()))
            .toList();
    return page(matching, startingToken, maxEntries);
  }

  @Override
  public GroupSnapshot takeGroupPart(
      String name,
      dev.soko.driver.volume.SpanningGroupId id,
      List<String> sourceVolumeIds,
      dev.soko.driver.volume.FreezeGate gate) {
    throw new UnsupportedOperationException("a group across nodes is not faked");
  }

  /** Every source must exist; the group's members are new snapshots of them. */
  @Override
  public GroupSnapshot createGroupSnapshot(String name, List<String> sourceVolumeIds) {
    maybeFail();
    lastGroupName = name;
    lastGroupSources = List.copyOf(sourceVolumeIds);
    String id = "group-" + ids.incrementAndGet();
    List<Snapshot> members =
        sourceVolumeIds.stream().map(source -> snapshotOf(id + "/" + source, source, id)).toList();
    GroupSnapshot group = new GroupSnapshot(id, name, members, Instant.ofEpochSecond(9, 1));
    groups.put(id, group);
    return group;
  }

  @Override
  public GroupSnapshot getGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
    maybeFail();
    lastGroupMembers = List.copyOf(snapshotIds);
    GroupSnapshot group = groups.get(groupSnapshotId);
    if (group == null) {
      throw StorageException.notFound("group snapshot %s", groupSnapshotId);
    }
    return group;
  }

  @Override
  public void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
    maybeFail();
    lastGroupMembers = List.copyOf(snapshotIds);
    GroupSnapshot group = groups.remove(groupSnapshotId);
    if (group != null) {
      group.members().forEach(m -> snapshots.remove(m.id()));
    }
  }

  @Override
  public ExpandResult expandVolume(String volumeId, long requiredBytes, long limitBytes) {
    maybeFail();
    lastExpand = new long[] {requiredBytes, limitBytes};
    return new ExpandResult(requiredBytes, true);
  }

  @Override
  public void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
    maybeFail();
    lastModify = Map.copyOf(mutableParameters);
  }

  @Override
  public List<PoolCapacity> capacity() {
    maybeFail();
    return capacities;
  }

  @Override
  public void stage(StageRequest request) {
    maybeFail();
    lastStage = request;
  }

  @Override
  public void unstage(String volumeId, Path stagingPath) {
    maybeFail();
    lastPath = stagingPath;
  }

  @Override
  public void publish(PublishRequest request) {
    maybeFail();
    lastPublish = request;
  }

  @Override
  public void unpublish(String volumeId, Path targetPath) {
    maybeFail();
    lastPath = targetPath;
  }

  @Override
  public VolumeUsage usage(String volumeId, Path volumePath) {
    maybeFail();
    lastPath = volumePath;
    return usage;
  }

  @Override
  public long expandOnNode(String volumeId, Path volumePath, long requiredBytes, long limitBytes) {
    maybeFail();
    lastPath = volumePath;
    lastExpand = new long[] {requiredBytes, limitBytes};
    return requiredBytes == 0 ? 4096 : requiredBytes;
  }

  @Override
  public ExpandResult expandNow(String volumeId, long requiredBytes, long limitBytes) {
    maybeFail();
    lastExpand = new long[] {requiredBytes, limitBytes};
    return new ExpandResult(requiredBytes, expandNowLeavesNodeWork);
  }

  @Override
  public List<String> attributeParameters() {
    return attributeParameters;
  }

  @Override
  public int maxVolumesPerNode() {
    return maxVolumes;
  }

  @Override
  public void close() {
    closed = true;
  }

  /** The fake keeps no storage whose blocks it could list: it serves no block metadata. */
  @Override
  public boolean servesBlockMetadata() {
    return false;
  }

  @Override
  public BlockStream allocatedBlocks(String snapshotId, long startingOffset) {
    throw StorageException.precondition("the fake engine has no block metadata");
  }

  @Override
  public BlockStream changedBlocks(
      String baseSnapshotId, String targetSnapshotId, long startingOffset) {
    throw StorageException.precondition("the fake engine has no block metadata");
  }

  @Override
  public SnapshotImage snapshotSource(String snapshotId) {
    throw StorageException.precondition("the fake engine has no snapshot images");
  }
}

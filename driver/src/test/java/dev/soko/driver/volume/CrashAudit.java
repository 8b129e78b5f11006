package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.state.FlatJson;
import dev.soko.driver.testing.BtrfsTools;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Checks a pool after a crash and a restart against what the client was told: every answered create
 * survives and every answered delete stays done, nothing exists that nobody asked for (a group
 * snapshot's member only with its group, a group only complete), no volume is abnormal, every image
 * or subvolume holds the data of the blank volume it descends from, and nothing leaked (storage and
 * records match, no temporary files, the pool's accounting equals what it holds). A btrfs volume
 * must also be a subvolume whose qgroup limit is its capacity (a limit lost or below it is a
 * capacity the client was answered and the volume does not enforce or give) and that is
 * no-copy-on-write, as every volume the backend makes.
 */
final class CrashAudit {

  private CrashAudit() {}

  static void verify(LocalVolumeManager engine, PoolLayout pool, ClientLog.Expectations told)
      throws Exception {
    Map<String, Volume> volumes =
        engine.listVolumes("", 0).items().stream()
            .collect(Collectors.toMap(Volume::id, Function.identity()));
    Map<String, Snapshot> snapshots =
        engine.listSnapshots(SnapshotFilter.ALL, "", 0).items().stream()
            .collect(Collectors.toMap(Snapshot::id, Function.identity()));

    Map<String, Map<String, String>> groups = groupRecords(pool);
    assertThat(volumes.keySet()).as("answered volumes survive").containsAll(told.volumes.required);
    assertThat(groups.keySet())
        .as("answered group snapshots survive")
        .containsAll(told.groups.required);
    for (Map<String, String> group : groups.values()) {
      assertThat(told.groups.allowed(group.get("id"), group.get("name")))
          .as("group snapshot %s was answered or in flight, and not deleted", group)
          .isTrue();
      assertThat(group.get("state")).as("group snapshot %s is complete", group).isEqualTo("READY");
      assertThat(engine.getGroupSnapshot(group.get("id"), List.of()).members())
          .as("group snapshot %s answers", group)
          .hasSize(group.get("snapshotIds").split(",").length);
    }
    assertThat(snapshots.keySet())
        .as("answered snapshots survive")
        .containsAll(told.snapshots.required);
    for (Volume v : volumes.values()) {
      assertThat(told.volumes.allowed(v.id(), v.name()))
          .as("volume %s (%s) was answered or in flight, and not deleted", v.id(), v.name())
          .isTrue();
      assertThat(v.condition().abnormal()).as("volume %s is healthy: %s", v.id(), v).isFalse();
      assertThat(v.capacityBytes())
          .isGreaterThanOrEqualTo(told.minimumCapacity.getOrDefault(v.id(), 0L));
      Path storage = pool.volume(v.id());
      assertStorageFits(pool, storage, v);
      assertHolds(pool, storage, v.name(), told);
    }
    for (Snapshot s : snapshots.values()) {
      assertThat(told.snapshots.allowed(s.id(), s.name()) || isMemberOf(groups, s))
          .as("snapshot %s (%s) was answered or in flight, and not deleted", s.id(), s.name())
          .isTrue();
      assertHolds(pool, pool.snapshot(s.id()), s.name(), told);
    }

    assertThat(names(pool.volumesDir()))
        .as("one image or subvolume per volume, no other")
        .containsExactlyInAnyOrderElementsOf(storageNames(pool, volumes.keySet()));
    assertThat(names(pool.snapshotsDir()))
        .as("one image or subvolume per snapshot, no other")
        .containsExactlyInAnyOrderElementsOf(storageNames(pool, snapshots.keySet()));
    for (String records : List.of("volumes", "snapshots", "groups")) {
      for (Path record : list(pool.pool().resolve(".soko/" + records))) {
        String name = record.getFileName().toString();
        assertThat(name).as("no temporary record file").doesNotEndWith(".tmp");
        if (name.endsWith(".json")) {
          assertThat(Files.readString(record)).contains("\"state\": \"READY\"");
        }
      }
    }
    long provisioned = volumes.values().stream().mapToLong(Volume::capacityBytes).sum();
    for (Snapshot s : snapshots.values()) {
      provisioned += reservedBytes(pool, s);
    }
    // The logical accounting: what GetCapacity offers is also bounded by the disk's free space.
    long accounted = engine.metricsView().pools().get(0).report().provisionedBytes();
    assertThat(accounted).as("the pool accounts for exactly what it holds").isEqualTo(provisioned);
  }

  /**
   * The group snapshots' records by ID: the engine lists no groups, and this is the disk's word.
   */
  private static Map<String, Map<String, String>> groupRecords(PoolLayout pool) throws Exception {
    Map<String, Map<String, String>> groups = new java.util.HashMap<>();
    for (Path record : list(pool.pool().resolve(".soko/groups"))) {
      if (record.getFileName().toString().endsWith(".json")) {
        Map<String, String> fields = FlatJson.parse(Files.readString(record));
        groups.put(fields.get("id"), fields);
      }
    }
    return groups;
  }

  /** A member of a group snapshot that exists: a group whose create a kill cut off has no other. */
  private static boolean isMemberOf(Map<String, Map<String, String>> groups, Snapshot s) {
    Map<String, String> group = groups.get(s.groupSnapshotId());
    return group != null && List.of(group.get("snapshotIds").split(",")).contains(s.id());
  }

  /**
   * What a snapshot holds in the pool: its recorded size, the size of its image. ListSnapshots
   * reports less for a snapshot of a volume smaller than its filesystem's floor (the smallest claim
   * that restores it).
   */
  private static long reservedBytes(PoolLayout pool, Snapshot s) throws Exception {
    Path record = pool.pool().resolve(".soko/snapshots/" + s.id() + ".json");
    return Long.parseLong(FlatJson.parse(Files.readString(record)).get("sizeBytes"));
  }

  /**
   * An image is no larger than the volume's capacity (it may be smaller: thin); a subvolume's
   * qgroup limit is exactly the capacity.
   */
  private static void assertStorageFits(PoolLayout pool, Path storage, Volume v) throws Exception {
    switch (pool.backend()) {
      case IMAGE_FILE -> assertThat(Files.size(storage)).isLessThanOrEqualTo(v.capacityBytes());
      case BTRFS_SUBVOLUME -> {
        assertThat(isSubvolume(storage)).as("volume %s is a subvolume", v.id()).isTrue();
        assertThat(limitOf(storage))
            .as("the qgroup limit of volume %s (%s) is its capacity", v.id(), v.name())
            .isEqualTo(v.capacityBytes());
        assertThat(BtrfsTools.noCopyOnWrite(storage))
            .as("volume %s (%s) is no-copy-on-write", v.id(), v.name())
            .isTrue();
      }
    }
  }

  /**
   * The storage starts with its origin's content, or zeros (or, in a subvolume, no content file) if
   * that write may not have landed.
   */
  private static void assertHolds(
      PoolLayout pool, Path storage, String name, ClientLog.Expectations told) throws Exception {
    assertThat(storage).as("the image or subvolume of %s", name).exists();
    if (pool.backend() == PoolConfig.Backend.BTRFS_SUBVOLUME) {
      assertThat(isSubvolume(storage)).as("%s is a subvolume", storage).isTrue();
    }
    byte[] head = new byte[CrashWorkload.CONTENT_BYTES];
    Path content = pool.contentFile(storage);
    if (Files.exists(content)) {
      try (FileChannel file = FileChannel.open(content)) {
        file.read(ByteBuffer.wrap(head), 0);
      }
    }
    String origin = told.origin(name);
    if (told.mayBeUnwritten(name) && Arrays.equals(head, new byte[head.length])) {
      return;
    }
    assertThat(head)
        .as("%s (%s) holds the content written to %s", storage.getFileName(), name, origin)
        .isEqualTo(CrashWorkload.content(origin));
  }

  private static List<String> storageNames(PoolLayout pool, Set<String> ids) {
    return ids.stream().map(pool::storageName).toList();
  }

  /** A subvolume's root directory is inode 256 (BTRFS_FIRST_FREE_OBJECTID); any other is not. */
  private static boolean isSubvolume(Path dir) throws Exception {
    return Files.isDirectory(dir) && ((Long) Files.getAttribute(dir, "unix:ino")) == 256L;
  }

  /** The subvolume's qgroup limit on referenced bytes, 0 for none. */
  private static long limitOf(Path subvolume) {
    String limit = BtrfsTools.limitOf(subvolume);
    return limit.equals("none") ? 0 : Long.parseLong(limit);
  }

  private static List<String> names(Path dir) throws Exception {
    return list(dir).stream().map(p -> p.getFileName().toString()).toList();
  }

  private static List<Path> list(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.toList();
    }
  }
}

package dev.soko.driver.transfer;

import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.extent.RangeCursor;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.ReadCopy;
import dev.soko.driver.volume.SnapshotImage;
import dev.soko.driver.volume.SnapshotImages;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeImage;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Snapshot images in plain files, with their allocated ranges said by the test; volumes likewise,
 * whose read copy is their file as it is, counted when made and when removed.
 */
final class FakeImages implements SnapshotImages {
  private record Held(SnapshotImage image, List<ByteRange> ranges) {}

  private final Map<String, Held> held = new ConcurrentHashMap<>();
  private final Set<String> deleted = ConcurrentHashMap.newKeySet();

  /** How often a reader asked whether a snapshot still exists: once per chunk it read. */
  final java.util.concurrent.atomic.AtomicInteger presenceChecks =
      new java.util.concurrent.atomic.AtomicInteger();

  void add(String id, Path file, long sizeBytes, List<ByteRange> ranges) {
    held.put(
        id, new Held(new SnapshotImage(id, "fast", sizeBytes, AccessType.BLOCK, "", file), ranges));
  }

  /** Read copies made, and removed (their blocks closed). */
  final java.util.concurrent.atomic.AtomicInteger copiesMade =
      new java.util.concurrent.atomic.AtomicInteger();

  final java.util.concurrent.atomic.AtomicInteger copiesRemoved =
      new java.util.concurrent.atomic.AtomicInteger();

  private final Map<String, Held> volumes = new ConcurrentHashMap<>();

  void addVolume(String id, Path file, long sizeBytes, List<ByteRange> ranges) {
    volumes.put(
        id, new Held(new SnapshotImage(id, "fast", sizeBytes, AccessType.BLOCK, "", file), ranges));
  }

  @Override
  public VolumeImage volumeSource(String volumeId) {
    Held h = volumes.get(volumeId);
    if (h == null) {
      throw StorageException.notFound("volume %s does not exist", volumeId);
    }
    return new VolumeImage(volumeId, "fast", h.image().sizeBytes(), AccessType.BLOCK, "");
  }

  @Override
  public ReadCopy readCopy(String volumeId) {
    VolumeImage facts = volumeSource(volumeId);
    Held h = volumes.get(volumeId);
    copiesMade.incrementAndGet();
    Iterator<ByteRange> ranges = h.ranges().iterator();
    RangeCursor cursor =
        new RangeCursor() {
          @Override
          public Optional<ByteRange> next() {
            return ranges.hasNext() ? Optional.of(ranges.next()) : Optional.empty();
          }

          @Override
          public void close() {
            copiesRemoved.incrementAndGet();
          }
        };
    return new ReadCopy(
        facts, h.image().path(), new BlockStream(facts.sizeBytes(), cursor, Optional::empty));
  }

  void delete(String id) {
    deleted.add(id);
  }

  @Override
  public SnapshotImage snapshotSource(String snapshotId) {
    Held h = held.get(snapshotId);
    if (h == null || deleted.contains(snapshotId)) {
      throw StorageException.notFound("snapshot %s does not exist", snapshotId);
    }
    return h.image();
  }

  @Override
  public BlockStream allocatedBlocks(String snapshotId, long startingOffset) {
    Held h = held.get(snapshotId);
    if (h == null || deleted.contains(snapshotId)) {
      throw StorageException.notFound("snapshot %s does not exist", snapshotId);
    }
    Iterator<ByteRange> ranges =
        h.ranges().stream().filter(r -> r.end() > startingOffset).iterator();
    RangeCursor cursor =
        new RangeCursor() {
          @Override
          public Optional<ByteRange> next() {
            return ranges.hasNext() ? Optional.of(ranges.next()) : Optional.empty();
          }

          @Override
          public void close() {}
        };
    return new BlockStream(
        h.image().sizeBytes(),
        cursor,
        () ->
            presenceChecks.incrementAndGet() > 0 && deleted.contains(snapshotId)
                ? Optional.of("snapshot " + snapshotId + " was deleted while it was read")
                : Optional.empty());
  }
}

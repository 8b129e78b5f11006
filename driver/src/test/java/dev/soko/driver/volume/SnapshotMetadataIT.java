package dev.soko.driver.volume;

import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.volume.StorageException.Reason;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Changed block tracking on real pools: block volumes on loop devices, written through the device,
 * snapshotted, and their block metadata read from the pool filesystem's extent maps (root).
 */
class SnapshotMetadataIT {
  private static final long K = 4096;
  private static final long GIB = 1024 * MIB;

  @RegisterExtension final HostFixture host = new HostFixture();

  private Path staging(String name) {
    return host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
  }

  private Path target(String name) {
    return host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/dev");
  }

  /** A published block volume of {@code bytes} in {@code pool}; returns the device's path. */
  private Path blockVolume(VolumeManager engine, Volume v) {
    engine.stage(new StageRequest(v.id(), staging(v.name()), v.accessType(), "", List.of()));
    engine.publish(
        new PublishRequest(
            v.id(), staging(v.name()), target(v.name()), false, v.accessType(), List.of()));
    return target(v.name());
  }

  private static Volume create(VolumeManager engine, String name, String pool, long bytes) {
    return engine.createVolume(
        new VolumeRequest(
            name, bytes, 0, pool, AccessType.BLOCK, "", ContentSource.EMPTY, Map.of()));
  }

  /** Writes {@code length} random bytes at {@code offset} of the device and flushes them. */
  private static void write(Path device, long offset, int length) throws IOException {
    byte[] bytes = new byte[length];
    new Random(offset).nextBytes(bytes);
    try (FileChannel channel = FileChannel.open(device, StandardOpenOption.WRITE)) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        channel.write(buffer, offset + buffer.position());
      }
      channel.force(true);
    }
  }

  private static List<ByteRange> all(BlockStream stream, int batch) {
    List<ByteRange> ranges = new ArrayList<>();
    try (stream) {
      for (List<ByteRange> b = stream.next(batch); !b.isEmpty(); b = stream.next(batch)) {
        assertThat(b.size()).isLessThanOrEqualTo(batch);
        ranges.addAll(b);
      }
    }
    return ranges;
  }

  private static long bytes(List<ByteRange> ranges) {
    return ranges.stream().mapToLong(ByteRange::length).sum();
  }

  private static boolean covers(List<ByteRange> ranges, long offset, long length) {
    return ranges.stream().anyMatch(r -> r.offset() <= offset && r.end() >= offset + length);
  }

  /** Every file below the pool with its size and modification time, to see that nothing moved. */
  private static Map<String, String> poolFiles(Path pool) throws IOException {
    Map<String, String> files = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(pool)) {
      for (Path p : walk.filter(Files::isRegularFile).toList()) {
        files.put(p.toString(), Files.size(p) + "@" + Files.getLastModifiedTime(p).toMillis());
      }
    }
    return files;
  }

  @Test
  void onAReflinkPoolTheDeltaIsExactlyTheBlocksWrittenBetweenTwoSnapshots() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      assertThat(engine.servesBlockMetadata()).isTrue();
      Volume v = create(engine, "cbt-xfs", "xfs", GIB);
      Path device = blockVolume(engine, v);
      write(device, 0, (int) (8 * MIB));
      Snapshot a = engine.createSnapshot("cbt-a", v.id());
      long[] written = {100 * MIB, 300 * MIB + K, 700 * MIB + 5 * K};
      for (long offset : written) {
        write(device, offset, (int) K);
      }
      Snapshot b = engine.createSnapshot("cbt-b", v.id());
      Map<String, String> before = poolFiles(host.xfsPool);

      List<ByteRange> allocated = all(engine.allocatedBlocks(a.id(), 0), 16);
      List<ByteRange> delta = all(engine.changedBlocks(a.id(), b.id(), 0), 1);

      assertThat(allocated).containsExactly(new ByteRange(0, 8 * MIB));
      assertThat(delta)
          .containsExactly(
              new ByteRange(written[0], K),
              new ByteRange(written[1], K),
              new ByteRange(written[2], K));
      // Resuming after the first range (how a client continues an interrupted stream).
      assertThat(all(engine.changedBlocks(a.id(), b.id(), written[0] + K), 16))
          .containsExactly(new ByteRange(written[1], K), new ByteRange(written[2], K));
      assertThat(all(engine.changedBlocks(b.id(), b.id(), 0), 16)).isEmpty();
      try (BlockStream stream = engine.allocatedBlocks(b.id(), 0)) {
        assertThat(stream.capacityBytes()).isEqualTo(GIB);
      }
      assertThat(poolFiles(host.xfsPool)).isEqualTo(before);
    }
  }

  @Test
  void aFilesystemVolumesDeltaIsTheFileWrittenPlusItsMetadata() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume v =
          engine.createVolume(
              new VolumeRequest(
                  "cbt-fs",
                  256 * MIB,
                  0,
                  "xfs",
                  AccessType.FILESYSTEM,
                  "xfs",
                  ContentSource.EMPTY,
                  Map.of()));
      Path mount = blockVolume(engine, v);
      Snapshot a = engine.createSnapshot("cbt-fs-a", v.id());
      byte[] file = new byte[(int) MIB];
      new Random(3).nextBytes(file);
      Files.write(
          mount.resolve("data"), file, StandardOpenOption.CREATE_NEW, StandardOpenOption.SYNC);
      Snapshot b = engine.createSnapshot("cbt-fs-b", v.id());

      long changed = bytes(all(engine.changedBlocks(a.id(), b.id(), 0), 1024));

      // The file's megabyte, and the filesystem's log and inode blocks that recorded it.
      assertThat(changed).isBetween(MIB, MIB + 4 * MIB);
    }
  }

  @Test
  void onAPoolWithoutReflinkTheDeltaIsEveryAllocatedRangeOfEither() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume v = create(engine, "cbt-host", "host", 64 * MIB);
      Path device = blockVolume(engine, v);
      write(device, 0, (int) MIB);
      Snapshot a = engine.createSnapshot("cbt-host-a", v.id());
      write(device, 32 * MIB, (int) K);
      Snapshot b = engine.createSnapshot("cbt-host-b", v.id());

      List<ByteRange> delta = all(engine.changedBlocks(a.id(), b.id(), 0), 1024);

      // Sparse copies share nothing: a superset of the change, never less.
      assertThat(covers(delta, 32 * MIB, K)).isTrue();
      assertThat(covers(delta, 0, MIB)).isTrue();
      assertThat(bytes(delta)).isEqualTo(bytes(all(engine.allocatedBlocks(b.id(), 0), 1024)));
    }
  }

  @Test
  void badRequestsAreRefusedWithTheirCodesAndADeletedSnapshotEndsTheStream() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume v = create(engine, "cbt-bad", "xfs", 64 * MIB);
      Volume other = create(engine, "cbt-other", "xfs", 64 * MIB);
      Path device = blockVolume(engine, v);
      for (int i = 0; i < 8; i++) {
        write(device, i * 2 * MIB, (int) K); // eight ranges apart
      }
      Snapshot a = engine.createSnapshot("cbt-bad-a", v.id());
      Snapshot b = engine.createSnapshot("cbt-bad-b", v.id());
      Snapshot elsewhere = engine.createSnapshot("cbt-other-a", other.id());

      assertThat(reason(() -> engine.allocatedBlocks("snap-unknown", 0)))
          .isEqualTo(Reason.NOT_FOUND);
      StorageException twoVolumes =
          catchThrowableOfType(
              StorageException.class, () -> engine.changedBlocks(a.id(), elsewhere.id(), 0));
      assertThat(twoVolumes.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(twoVolumes.getMessage()).contains(a.id(), elsewhere.id());
      assertThat(reason(() -> engine.allocatedBlocks(a.id(), 64 * MIB + 1)))
          .isEqualTo(Reason.OUT_OF_RANGE);
      assertThat(reason(() -> engine.allocatedBlocks(a.id(), -1))).isEqualTo(Reason.OUT_OF_RANGE);
      assertThat(all(engine.allocatedBlocks(a.id(), 64 * MIB), 16)).isEmpty();

      BlockStream stream = engine.changedBlocks(elsewhere.id(), elsewhere.id(), 0);
      stream.close();
      BlockStream reading = engine.allocatedBlocks(b.id(), 0);
      assertThat(reading.next(2)).hasSize(2);
      engine.deleteSnapshot(b.id());
      StorageException gone = catchThrowableOfType(StorageException.class, () -> reading.next(2));
      reading.close();
      assertThat(gone.reason()).isEqualTo(Reason.NOT_FOUND);
      assertThat(gone.getMessage()).contains(b.id(), "deleted");
    }
  }

  private static Reason reason(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
    return EngineFixture.reason(call);
  }
}

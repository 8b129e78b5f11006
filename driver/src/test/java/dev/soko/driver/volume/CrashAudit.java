package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
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
 * survives and every answered delete stays done, nothing exists that nobody asked for, no volume is
 * abnormal, every image holds the data of the blank volume it descends from, and nothing leaked
 * (images and records match, no temporary files, the pool's accounting equals what it holds).
 */
final class CrashAudit {
  private CrashAudit() {}

  static void verify(LocalVolumeManager engine, Path pool, ClientLog.Expectations told)
      throws Exception {
    Map<String, Volume> volumes =
        engine.listVolumes("", 0).items().stream()
            .collect(Collectors.toMap(Volume::id, Function.identity()));
    Map<String, Snapshot> snapshots =
        engine.listSnapshots(SnapshotFilter.ALL, "", 0).items().stream()
            .collect(Collectors.toMap(Snapshot::id, Function.identity()));

    assertThat(volumes.keySet()).as("answered volumes survive").containsAll(told.volumes.required);
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
      Path image = pool.resolve("images/" + v.id() + ".img");
      assertThat(Files.size(image)).isLessThanOrEqualTo(v.capacityBytes());
      assertHolds(image, v.name(), told);
    }
    for (Snapshot s : snapshots.values()) {
      assertThat(told.snapshots.allowed(s.id(), s.name()))
          .as("snapshot %s (%s) was answered or in flight, and not deleted", s.id(), s.name())
          .isTrue();
      assertHolds(pool.resolve("snapshots/" + s.id() + ".img"), s.name(), told);
    }

    assertThat(names(pool.resolve("images")))
        .as("one image per volume, no other")
        .containsExactlyInAnyOrderElementsOf(withSuffix(volumes.keySet()));
    assertThat(names(pool.resolve("snapshots")))
        .as("one image per snapshot, no other")
        .containsExactlyInAnyOrderElementsOf(withSuffix(snapshots.keySet()));
    for (Path record : list(pool.resolve(".soko/volumes"))) {
      String name = record.getFileName().toString();
      assertThat(name).as("no temporary record file").doesNotEndWith(".tmp");
      if (name.endsWith(".json")) {
        assertThat(Files.readString(record)).contains("\"state\": \"READY\"");
      }
    }
    long provisioned =
        volumes.values().stream().mapToLong(Volume::capacityBytes).sum()
            + snapshots.values().stream().mapToLong(Snapshot::sizeBytes).sum();
    // The logical accounting: what GetCapacity offers is also bounded by the disk's free space.
    long accounted = engine.metricsView().pools().get(0).report().provisionedBytes();
    assertThat(accounted).as("the pool accounts for exactly what it holds").isEqualTo(provisioned);
  }

  /** The image starts with its origin's content, or zeros if that write may not have landed. */
  private static void assertHolds(Path image, String name, ClientLog.Expectations told)
      throws Exception {
    assertThat(image).as("the image of %s", name).isRegularFile();
    byte[] head = new byte[CrashWorkload.CONTENT_BYTES];
    try (FileChannel file = FileChannel.open(image)) {
      file.read(ByteBuffer.wrap(head), 0);
    }
    String origin = told.origin(name);
    if (told.mayBeUnwritten(name) && Arrays.equals(head, new byte[head.length])) {
      return;
    }
    assertThat(head)
        .as("%s (%s) holds the content written to %s", image.getFileName(), name, origin)
        .isEqualTo(CrashWorkload.content(origin));
  }

  private static List<String> withSuffix(Set<String> ids) {
    return ids.stream().map(id -> id + ".img").toList();
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

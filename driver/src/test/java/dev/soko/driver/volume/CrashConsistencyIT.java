package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.DriverConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a process running engine operations with SIGKILL at random points, many times, then checks
 * that the pool holds exactly what the client was told (give or take the one operation in flight at
 * each kill) and that nothing leaked: no stray image, no half-written record.
 */
class CrashConsistencyIT {
  @TempDir Path dir;

  @Test
  void randomKillsLoseNothingAcknowledgedAndLeakNothing() throws Exception {
    Path pool = dir.resolve("pool");
    Path journal = dir.resolve("journal");
    Random random = new Random(2024);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    for (int run = 0; run < 10; run++) {
      Process child =
          new ProcessBuilder(
                  java,
                  "-cp",
                  System.getProperty("java.class.path"),
                  CrashWorkload.class.getName(),
                  pool.toString(),
                  journal.toString(),
                  "r" + run,
                  Long.toString(random.nextLong()))
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("child-" + run + ".log").toFile())
              .start();
      Thread.sleep(600 + random.nextInt(1200));
      child.destroyForcibly(); // SIGKILL: no shutdown hook, no finally block runs
      assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    Journal told = Journal.read(Files.readAllLines(journal));
    assertThat(told.acknowledged).as("the workload made progress").isGreaterThan(20);
    assertThat(told.interruptedCount)
        .as("kills landed in the middle of operations")
        .isGreaterThan(3);

    DriverConfig config = CrashWorkload.engineConfig(pool, dir);
    try (LocalVolumeManager engine = LocalVolumeManager.open(config)) {
      Map<String, Volume> volumes =
          engine.listVolumes("", 0).items().stream().collect(Collectors.toMap(Volume::id, v -> v));
      Set<String> snapshots =
          engine.listSnapshots(SnapshotFilter.ALL, "", 0).items().stream()
              .map(Snapshot::id)
              .collect(Collectors.toSet());

      for (String id : told.liveVolumes.keySet()) {
        if (!told.interruptedDeletes.contains(id)) {
          assertThat(volumes).as("acknowledged volume %s survives", id).containsKey(id);
        }
      }
      for (Volume v : volumes.values()) {
        assertThat(
                told.liveVolumes.containsKey(v.id()) || told.interruptedCreates.contains(v.name()))
            .as("volume %s (%s) was acknowledged or in flight", v.id(), v.name())
            .isTrue();
        assertThat(v.condition().abnormal()).isFalse();
        Long grown = told.expandedTo.get(v.id());
        if (grown != null) {
          assertThat(v.capacityBytes()).isGreaterThanOrEqualTo(grown);
        }
        assertThat(Files.size(pool.resolve("images/" + v.id() + ".img")))
            .isLessThanOrEqualTo(v.capacityBytes());
      }
      for (String id : told.liveSnapshots) {
        if (!told.interruptedDeletes.contains(id)) {
          assertThat(snapshots).as("acknowledged snapshot %s survives", id).contains(id);
        }
      }

      // Nothing leaked: every image has a record and vice versa; no temp or unfinished records.
      assertThat(names(pool.resolve("images")))
          .containsExactlyInAnyOrderElementsOf(
              volumes.keySet().stream().map(id -> id + ".img").toList());
      assertThat(names(pool.resolve("snapshots")))
          .containsExactlyInAnyOrderElementsOf(snapshots.stream().map(id -> id + ".img").toList());
      assertThat(names(pool.resolve(".soko/volumes"))).noneMatch(n -> n.endsWith(".tmp"));
      for (Path record : list(pool.resolve(".soko/volumes"))) {
        if (!record.getFileName().toString().endsWith(".json")) {
          continue; // the journal
        }
        assertThat(Files.readString(record)).contains("\"state\": \"READY\"");
      }
      long provisioned =
          volumes.values().stream().mapToLong(Volume::capacityBytes).sum()
              + engine.listSnapshots(SnapshotFilter.ALL, "", 0).items().stream()
                  .mapToLong(Snapshot::sizeBytes)
                  .sum();
      PoolCapacity capacity = engine.capacity().get(0);
      assertThat(capacity.totalBytes() - capacity.availableBytes()).isEqualTo(provisioned);
    }
  }

  private static List<String> names(Path dir) throws Exception {
    return list(dir).stream().map(p -> p.getFileName().toString()).toList();
  }

  private static List<Path> list(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.toList();
    }
  }

  /** What the workload's journal says the client was told, and what was in flight at a kill. */
  private static final class Journal {
    final Map<String, String> liveVolumes = new HashMap<>();
    final Set<String> liveSnapshots = new HashSet<>();
    final Map<String, Long> expandedTo = new HashMap<>();
    final Set<String> interruptedCreates = new HashSet<>();
    final Set<String> interruptedDeletes = new HashSet<>();
    int acknowledged;
    int interruptedCount;

    static Journal read(List<String> lines) {
      Journal j = new Journal();
      String[] pending = null;
      for (String line : lines) {
        String[] f = line.split(" ");
        if (f.length < 3) {
          continue; // a line torn by the kill
        }
        if (f[0].equals("begin")) {
          if (pending != null) {
            j.interrupted(pending);
          }
          pending = f;
          continue;
        }
        pending = null;
        j.acknowledged++;
        switch (f[1]) {
          case "create" -> j.liveVolumes.put(f[3], f[2]);
          case "snapshot" -> j.liveSnapshots.add(f[3]);
          case "delete" -> j.liveVolumes.remove(f[2]);
          case "desnap" -> j.liveSnapshots.remove(f[2]);
          case "expand" -> j.expandedTo.merge(f[2], Long.parseLong(f[3]), Math::max);
          default -> throw new AssertionError(line);
        }
      }
      if (pending != null) {
        j.interrupted(pending);
      }
      return j;
    }

    private void interrupted(String[] begin) {
      interruptedCount++;
      switch (begin[1]) {
        case "create", "snapshot" -> interruptedCreates.add(begin[2]);
        case "delete", "desnap" -> interruptedDeletes.add(begin[2]);
        default -> {
          // an interrupted expand may or may not have been granted: both are correct
        }
      }
    }
  }
}

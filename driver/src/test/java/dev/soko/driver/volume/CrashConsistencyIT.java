package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
      awaitFirstOperation(journal, child);
      Thread.sleep(200 + random.nextInt(1200));
      child.destroyForcibly(); // SIGKILL: no shutdown hook, no finally block runs
      assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    ClientLog.Expectations told = ClientLog.parse(Files.readString(journal)).atEnd();
    assertThat(told.acknowledged).as("the workload made progress").isGreaterThan(20);
    assertThat(told.uncertain).as("kills landed in the middle of operations").isGreaterThan(3);

    try (LocalVolumeManager engine =
        LocalVolumeManager.open(CrashWorkload.engineConfig(pool, dir))) {
      CrashAudit.verify(engine, new PoolLayout(pool, PoolConfig.Backend.IMAGE_FILE), told);
    }
  }

  /**
   * Waits until the child has written to the client log, so a kill lands in its work and not in the
   * JVM's start, which takes seconds on a loaded machine.
   */
  private static void awaitFirstOperation(Path journal, Process child) throws Exception {
    long before = Files.exists(journal) ? Files.size(journal) : 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while ((!Files.exists(journal) || Files.size(journal) == before) && child.isAlive()) {
      assertThat(System.nanoTime()).as("the workload started within 60 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}

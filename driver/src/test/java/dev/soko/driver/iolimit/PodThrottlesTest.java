package dev.soko.driver.iolimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which publications are written, and when, on a cgroup v1 tree of plain directories. */
class PodThrottlesTest {
  private static final String POD = "0b8a4a6e-6f5c-4c47-9d1e-3f0c1a2b3c4d";
  private static final String DEVICE = "7:3";
  private static final String READ_IOPS = "blkio.throttle.read_iops_device";
  private static final IoLimits LIMITS = new IoLimits(200, 100, 0, 0);

  @TempDir Path fs;
  private Path blkio;
  private PodThrottles throttles;

  @BeforeEach
  void cgroupV1() throws IOException {
    blkio = Files.createDirectories(fs.resolve("blkio"));
    Files.writeString(blkio.resolve(READ_IOPS), "");
    // The periodic pass is called by the tests themselves.
    throttles = new PodThrottles(CgroupThrottle.detect(fs), Duration.ofHours(1));
  }

  @AfterEach
  void stop() {
    throttles.close();
  }

  @Test
  void aPublicationWithoutLimitsIsNeverWritten() throws IOException {
    Path pod = podCgroup("besteffort");

    throttles.published(fs.resolve("target"), "vol-1", POD, DEVICE, IoLimits.NONE);
    throttles.applyAll();

    assertThat(pod.resolve(READ_IOPS)).doesNotExist();
  }

  @Test
  void liftedLimitsAreWrittenOnceAndNotAgainByThePeriodicPass() throws IOException {
    Path pod = podCgroup("besteffort");
    throttles.published(fs.resolve("target"), "vol-1", POD, DEVICE, LIMITS);
    assertThat(pod.resolve(READ_IOPS)).hasContent(DEVICE + " 200");

    throttles.changed("vol-1", IoLimits.NONE);
    assertThat(pod.resolve(READ_IOPS)).hasContent(DEVICE + " 0");

    Files.delete(pod.resolve(READ_IOPS));
    throttles.applyAll();
    assertThat(pod.resolve(READ_IOPS)).doesNotExist();
  }

  @Test
  void containersStartedLaterGetTheLimitsAtTheNextPass() throws IOException {
    Path pod = podCgroup("besteffort");
    throttles.published(fs.resolve("target"), "vol-1", POD, DEVICE, LIMITS);

    Path app = Files.createDirectories(pod.resolve("app"));
    throttles.applyAll();

    assertThat(app.resolve(READ_IOPS)).hasContent(DEVICE + " 200");
  }

  @Test
  void aStartingContainerGetsItsPodsLimitsAtOnceAndOtherPodsAreLeftAlone() throws IOException {
    Path pod = podCgroup("besteffort");
    throttles.published(fs.resolve("target"), "vol-1", POD, DEVICE, LIMITS);
    Path app = Files.createDirectories(pod.resolve("app"));

    throttles.containerStarting("1b8a4a6e-6f5c-4c47-9d1e-3f0c1a2b3c4d");
    assertThat(app.resolve(READ_IOPS)).doesNotExist();

    throttles.containerStarting(POD);
    assertThat(app.resolve(READ_IOPS)).hasContent(DEVICE + " 200");
  }

  @Test
  void aPodCgroupThatIsGoneIsSearchedForAgain() throws IOException {
    Path first = podCgroup("besteffort");
    throttles.published(fs.resolve("target"), "vol-1", POD, DEVICE, LIMITS);
    deleteTree(first);

    Path second = podCgroup("burstable");
    throttles.applyAll();

    assertThat(second.resolve(READ_IOPS)).hasContent(DEVICE + " 200");
  }

  private Path podCgroup(String qos) throws IOException {
    return Files.createDirectories(blkio.resolve("kubepods/" + qos + "/pod" + POD));
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}

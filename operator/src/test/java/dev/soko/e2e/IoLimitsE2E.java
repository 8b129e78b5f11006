package dev.soko.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClass;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClassBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * IO limits through VolumeAttributesClasses on real nodes, measured by fio inside the pod: an ext4
 * claim created with a class runs at that class's limits, a class changed while the pod runs
 * changes them without restarting it (ControllerModifyVolume through the node's NodeRequest), a
 * class whose limits are all {@code max} lifts them, and a btrfs pool refuses a class with a reason
 * the claim's events show. A container's first writes are limited too, also after it restarts.
 * Every measured figure goes to {@code target/e2e-reports/io-limits.md}.
 */
class IoLimitsE2E extends RealClusterTier {
  private static final String APPS = "e2e-io-limits";
  private static final Duration LONG = Duration.ofSeconds(180);
  private static final BtrfsPool BTRFS = new BtrfsPool("io-limits");
  private static final String CLAIM = "limited";
  private static final String POD = "fio";

  /** fio on the claim's one test file, direct IO, JSON out; each call adds its job. */
  private static final String FIO =
      "fio --output-format=json --directory=/data --filename=fio.dat --size=32m --direct=1"
          + " --ioengine=libaio";

  /** How far a measured rate may be from its limit. */
  private static final double TOLERANCE = 0.10;

  private static final String SLOW = "io-slow";
  private static final String FASTER = "io-faster";
  private static final String UNLIMITED = "io-unlimited";

  private static final Limits SLOW_LIMITS = new Limits(200, 300, 8 << 20, 12 << 20);
  private static final Limits FASTER_LIMITS = new Limits(400, 600, 16 << 20, 24 << 20);

  /** The class, claim and pod of the first-I/O test. */
  private static final String FIRST_IO = "io-first";

  private static final long FIRST_IO_IOPS = 50;

  /**
   * The container's first action: 400 direct 4 KiB writes, timed by the kernel's uptime (busybox's
   * date has no sub-second format, and its dd prints no duration), printed as "seconds=N"; then it
   * waits, ending at TERM.
   */
  private static final String FIRST_WRITES =
      "trap 'exit 0' TERM; read s _ </proc/uptime;"
          + " dd if=/dev/zero of=/data/first.dat bs=4k count=400 oflag=direct 2>/dev/null;"
          + " read e _ </proc/uptime; awk \"BEGIN { print \\\"seconds=\\\" $e - $s }\";"
          + " while true; do sleep 1; done";

  private static final Pattern DD_SECONDS = Pattern.compile("seconds=([0-9.]+)");

  private final List<String> table = new ArrayList<>();

  /** A class's four parameters, as numbers. */
  record Limits(long writeIops, long readIops, long writeBytesPerSecond, long readBytesPerSecond) {
    Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("writeIOPS", Long.toString(writeIops));
      p.put("readIOPS", Long.toString(readIops));
      p.put("writeBytesPerSecond", (writeBytesPerSecond >> 20) + "Mi");
      p.put("readBytesPerSecond", (readBytesPerSecond >> 20) + "Mi");
      return p;
    }
  }

  /** One fio run's rates: 4 KiB random IOPS and 1 MiB sequential bytes per second, direct IO. */
  record Rates(double writeIops, double readIops, double writeBytesPerSecond, double readBytes) {}

  IoLimitsE2E() {
    super(APPS);
  }

  @BeforeAll
  void install() throws Exception {
    BTRFS.mountOn(cluster);
    DefaultInstall.helm(
        cluster,
        "install",
        LocalCluster.REPO.resolve("helm/soko"),
        DefaultInstall.values(cluster.imageRegistry, BTRFS.spec()));
    DefaultInstall.awaitReady(client, APPS);
    createClass(SLOW, SLOW_LIMITS.parameters());
    createClass(FASTER, FASTER_LIMITS.parameters());
    // Kubernetes refuses a class without parameters, and a claim cannot go back to none.
    createClass(
        UNLIMITED,
        Map.of(
            "readIOPS",
            "max",
            "writeIOPS",
            "max",
            "readBytesPerSecond",
            "max",
            "writeBytesPerSecond",
            "max"));
    table.add("| class | limits (write / read IOPS, write / read MiB/s) | measured |");
    table.add("|---|---|---|");
  }

  @AfterAll
  void writeTable() throws Exception {
    Path report = Path.of("target", "e2e-reports", "io-limits.md");
    Files.createDirectories(report.getParent());
    Files.write(report, table);
  }

  @Test
  @Order(1)
  void aClaimCreatedWithAClassRunsAtItsLimits() throws InterruptedException {
    PersistentVolumeClaim claim = apps.claim(CLAIM, DefaultInstall.EXT4, "64Mi", false);
    claim.getSpec().setVolumeAttributesClassName(SLOW);
    apps.create(claim);
    apps.create(
        apps.pod(POD, CLAIM, false, false)
            .editSpec()
            .editFirstContainer()
            .withImage(cluster.imageRegistry + "/fio:1")
            .endContainer()
            .endSpec());
    apps.awaitRunning(POD, LONG);
    fillTheTestFile();
    // The driver limits the pod at NodePublishVolume; its app container's cgroup, made after that,
    // gets the limits at the driver's next pass, at most 2 s later.
    Thread.sleep(3_000);
    assertWithin(SLOW, SLOW_LIMITS, measure(SLOW));
  }

  @Test
  @Order(2)
  void anotherClassOnTheRunningPodChangesTheLimitsWithoutARestart() {
    Pod before = pod();
    switchClass(FASTER);
    assertWithin(FASTER, FASTER_LIMITS, measure(FASTER));
    Pod after = pod();
    assertThat(after.getMetadata().getUid()).isEqualTo(before.getMetadata().getUid());
    assertThat(after.getStatus().getContainerStatuses().get(0).getRestartCount()).isZero();
  }

  @Test
  @Order(3)
  void aClassOfNoLimitsLiftsThem() {
    switchClass(UNLIMITED);
    Rates r = measure(UNLIMITED);
    assertThat(r.writeIops())
        .as(
            "4 KiB random writes without limits, against the last limit of %d IOPS",
            FASTER_LIMITS.writeIops())
        .isGreaterThan(2.0 * FASTER_LIMITS.writeIops());
    assertThat(r.readIops())
        .as("4 KiB random reads without limits")
        .isGreaterThan(2.0 * FASTER_LIMITS.readIops());
  }

  @Test
  @Order(4)
  void aBtrfsPoolRefusesAClassAndTheClaimSaysWhy() {
    PersistentVolumeClaim claim = apps.claim("btrfs-limited", BtrfsPool.CLASS, "64Mi", false);
    claim.getSpec().setVolumeAttributesClassName(SLOW);
    apps.create(claim);
    apps.create(
        apps.pod("btrfs-limited", "btrfs-limited", false, false)
            .editSpec()
            .withNodeSelector(BTRFS.nodeSelector())
            .endSpec());
    Event refused = apps.awaitEvent("btrfs-limited", "ProvisioningFailed", LONG);
    assertThat(refused.getMessage())
        .contains("InvalidArgument")
        .contains("IO limits need a block device of the volume's own")
        .contains("pool " + BtrfsPool.NAME);
    assertThat(apps.claimNamed("btrfs-limited").getStatus().getPhase()).isEqualTo("Pending");
  }

  /**
   * The limit holds from a container's first I/O, because the driver's NRI plugin writes it into
   * the container's cgroup after the runtime created the container and before it runs: 400 direct 4
   * KiB writes under 50 write IOPS take at least 7 s (the throttle lets a first slice through at
   * once), on the container's first start and after it restarted (a new container, a new cgroup).
   * Without the plugin the limit reached the container at the driver's next periodic pass: the
   * first ~1,000 writes ran unthrottled, and these 400 took well under a second.
   */
  @Test
  @Order(5)
  void aContainersFirstWritesAreLimitedAlsoAfterItRestarts() {
    createClass(FIRST_IO, Map.of("writeIOPS", Long.toString(FIRST_IO_IOPS)));
    PersistentVolumeClaim claim = apps.claim(FIRST_IO, DefaultInstall.EXT4, "64Mi", false);
    claim.getSpec().setVolumeAttributesClassName(FIRST_IO);
    apps.create(claim);
    apps.create(
        apps.pod(FIRST_IO, FIRST_IO, false, false)
            .editSpec()
            .editFirstContainer()
            .withCommand("sh", "-c", FIRST_WRITES)
            .endContainer()
            .endSpec());
    double first = secondsOfTheFirstWrites(0);
    // TERM to the container's shell, which ends it; the kubelet starts a new container.
    apps.sh(FIRST_IO, "kill 1");
    double restarted = secondsOfTheFirstWrites(1);
    table.add(
        "| %s | %d write IOPS, from the container's first I/O | 400 direct 4 KiB writes: %.2f s at"
                .formatted(FIRST_IO, FIRST_IO_IOPS, first)
            + " the first start, %.2f s after a restart |".formatted(restarted));
    assertThat(first)
        .as("seconds for a new container's first 400 direct 4 KiB writes at 50 write IOPS")
        .isGreaterThanOrEqualTo(7.0);
    assertThat(restarted).as("the same after the container restarted").isGreaterThanOrEqualTo(7.0);
  }

  @Test
  @Order(6)
  void uninstallLeavesNothing() throws Exception {
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    for (String name : List.of(SLOW, FASTER, UNLIMITED, FIRST_IO)) {
      client.resources(VolumeAttributesClass.class).withName(name).delete();
    }
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
    BTRFS.removeFrom(cluster);
  }

  // --- helpers --------------------------------------------------------------------------------

  private void createClass(String name, Map<String, String> parameters) {
    client
        .resource(
            new VolumeAttributesClassBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withDriverName(DefaultInstall.DRIVER)
                .withParameters(parameters)
                .build())
        .serverSideApply();
  }

  /** Sets the claim's class and waits until the driver has applied it. */
  private void switchClass(String name) {
    client
        .persistentVolumeClaims()
        .inNamespace(APPS)
        .withName(CLAIM)
        .edit(
            c -> {
              c.getSpec().setVolumeAttributesClassName(name);
              return c;
            });
    Await.until(
        "claim " + CLAIM + " modified to class " + name,
        LONG,
        () -> apps.claimNamed(CLAIM),
        c ->
            name.equals(c.getStatus().getCurrentVolumeAttributesClassName())
                && c.getStatus().getModifyVolumeStatus() == null);
  }

  /** dd's seconds, as the container started {@code restarts} times before printed them. */
  private double secondsOfTheFirstWrites(int restarts) {
    Pod running =
        Await.until(
            "pod " + FIRST_IO + " running after " + restarts + " restarts",
            LONG,
            () -> client.pods().inNamespace(APPS).withName(FIRST_IO).get(),
            p ->
                p != null
                    && p.getStatus() != null
                    && p.getStatus().getContainerStatuses() != null
                    && p.getStatus().getContainerStatuses().size() == 1
                    && p.getStatus().getContainerStatuses().get(0).getRestartCount() == restarts
                    && p.getStatus().getContainerStatuses().get(0).getState().getRunning() != null);
    String log =
        Await.until(
            "the writes' seconds in the log of " + FIRST_IO + " (" + restarts + " restarts)",
            LONG,
            () ->
                client
                    .pods()
                    .inNamespace(APPS)
                    .withName(running.getMetadata().getName())
                    .inContainer("app")
                    .getLog(),
            l -> l != null && DD_SECONDS.matcher(l).find());
    Matcher m = DD_SECONDS.matcher(log);
    m.find();
    return Double.parseDouble(m.group(1));
  }

  private Pod pod() {
    return client.pods().inNamespace(APPS).withName(POD).get();
  }

  /**
   * Writes the whole test file once, in order. fio lays out a file for writing with fallocate, and
   * ext4 answers a read of a block never written from its extent map without any IO: random reads
   * then ran far above their limit (2,361 IOPS against 300), and 1 MiB writes over the patchwork of
   * written and unwritten extents the random writes leave split into many small requests that the
   * IOPS limit held at a third of the bandwidth limit.
   */
  private void fillTheTestFile() {
    apps.sh(POD, FIO + " --fallocate=none --name=fill --rw=write --bs=1m --iodepth=4");
  }

  /** fio in the pod: four jobs one after the other, each for a few seconds of direct IO. */
  private Rates measure(String className) {
    String job = FIO + " --time_based --ramp_time=1 --runtime=5";
    double writeIops = rate(job + " --name=w --rw=randwrite --bs=4k --iodepth=16", "write", "iops");
    double readIops = rate(job + " --name=r --rw=randread --bs=4k --iodepth=16", "read", "iops");
    double writeBw = rate(job + " --name=W --rw=write --bs=1m --iodepth=4", "write", "bw_bytes");
    double readBw = rate(job + " --name=R --rw=read --bs=1m --iodepth=4", "read", "bw_bytes");
    Rates r = new Rates(writeIops, readIops, writeBw, readBw);
    table.add(
        "| %s | %s | %.0f / %.0f IOPS, %.2f / %.2f MiB/s |"
            .formatted(
                className,
                limitsOf(className),
                r.writeIops(),
                r.readIops(),
                r.writeBytesPerSecond() / (1 << 20),
                r.readBytes() / (1 << 20)));
    return r;
  }

  private static String limitsOf(String className) {
    Limits l =
        switch (className) {
          case SLOW -> SLOW_LIMITS;
          case FASTER -> FASTER_LIMITS;
          default -> null;
        };
    return l == null
        ? "none"
        : "%d / %d IOPS, %d / %d MiB/s"
            .formatted(
                l.writeIops(),
                l.readIops(),
                l.writeBytesPerSecond() >> 20,
                l.readBytesPerSecond() >> 20);
  }

  private double rate(String fio, String direction, String field) {
    try {
      JsonNode out = new ObjectMapper().readTree(apps.sh(POD, fio));
      return out.path("jobs").path(0).path(direction).path(field).asDouble();
    } catch (java.io.IOException e) {
      throw new AssertionError("fio's output is not JSON: " + e, e);
    }
  }

  private static void assertWithin(String className, Limits limits, Rates r) {
    assertRate(className + ": 4 KiB random writes (IOPS)", r.writeIops(), limits.writeIops());
    assertRate(className + ": 4 KiB random reads (IOPS)", r.readIops(), limits.readIops());
    assertRate(
        className + ": 1 MiB writes (bytes/s)",
        r.writeBytesPerSecond(),
        limits.writeBytesPerSecond());
    assertRate(className + ": 1 MiB reads (bytes/s)", r.readBytes(), limits.readBytesPerSecond());
  }

  private static void assertRate(String what, double measured, long limit) {
    assertThat(measured)
        .as("%s against the limit %d", what, limit)
        .isBetween(limit * (1 - TOLERANCE), limit * (1 + TOLERANCE));
  }
}

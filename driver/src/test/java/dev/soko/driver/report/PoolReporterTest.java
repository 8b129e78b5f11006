package dev.soko.driver.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.volume.MetricsView;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PoolReporterTest {
  static final Clock CLOCK = Clock.fixed(NodeReportTest.NOW, ZoneOffset.UTC);
  static final String APPLY_PATH =
      "/apis/soko.dev/v1alpha1/storagenodes/soko.node-1?fieldManager=soko-driver&force=true";

  @TempDir Path dir;
  ApiServerFake api;
  final AtomicReference<Map<String, PoolVerdict>> verdicts =
      new AtomicReference<>(Map.of("fast", PoolVerdict.READY));
  final AtomicReference<MetricsView> readings =
      new AtomicReference<>(new MetricsView(List.of(NodeReportTest.row("fast", 2)), List.of()));
  PoolReporter reporter;

  @BeforeEach
  void setUp() throws Exception {
    api = new ApiServerFake();
  }

  @AfterEach
  void tearDown() {
    if (reporter != null) {
      reporter.close();
    }
    api.close();
  }

  PoolReporter reporter(Duration period, Duration minInterval) throws Exception {
    reporter =
        new PoolReporter(
            api.client(dir, "sa-token"),
            NodeReportTest.ID,
            "0.1.0",
            Optional.empty(),
            verdicts::get,
            readings::get,
            CLOCK,
            period,
            minInterval);
    return reporter;
  }

  @Test
  void appliesTheWholeStorageNodeWithTheTokenAsFieldManagerSokoDriver() throws Exception {
    reporter(Duration.ofHours(1), Duration.ZERO).report();

    ApiServerFake.Request r = api.next();
    assertThat(r.method()).isEqualTo("PATCH");
    assertThat(r.uri()).isEqualTo(APPLY_PATH);
    assertThat(r.contentType()).isEqualTo("application/apply-patch+yaml");
    assertThat(r.authorization()).isEqualTo("Bearer sa-token");
    assertThat(r.body())
        .isEqualTo(
            NodeReport.storageNode(
                NodeReportTest.ID,
                "0.1.0",
                Optional.empty(),
                CLOCK.instant(),
                Map.of("fast", PoolVerdict.READY),
                new MetricsView(List.of(NodeReportTest.row("fast", 2)), List.of())))
        .contains("\"sizeBytes\":1000");
  }

  @Test
  void aPoolThatBecomesRefusedGetsOneWarningEventBeforeTheStorageNode() throws Exception {
    PoolReporter r = reporter(Duration.ofHours(1), Duration.ZERO);
    Map<String, PoolVerdict> refused = new LinkedHashMap<>();
    refused.put("fast", PoolVerdict.refused("pool path /p is missing"));
    verdicts.set(refused);

    r.onVerdicts(Map.of("fast", PoolVerdict.READY));
    r.onVerdicts(refused);
    r.onVerdicts(refused); // the same verdict again: no second event
    r.report();

    Thread.sleep(300); // the write onVerdicts scheduled
    List<ApiServerFake.Request> all = api.drain();

    List<ApiServerFake.Request> events =
        all.stream().filter(q -> q.method().equals("POST")).toList();
    assertThat(events).hasSize(1);
    ApiServerFake.Request event = events.get(0);
    assertThat(event.uri()).isEqualTo("/api/v1/namespaces/default/events");
    assertThat(event.contentType()).isEqualTo("application/json");
    assertThat(event.body())
        .contains("\"reason\":\"PoolRefused\"")
        .contains(
            "\"message\":\"pool fast of StorageCluster soko refused: pool path /p is missing\"");
    List<ApiServerFake.Request> after = all.subList(all.indexOf(event) + 1, all.size());
    assertThat(after).as("the StorageNode follows the event").isNotEmpty();
    assertThat(after).allSatisfy(q -> assertThat(q.uri()).isEqualTo(APPLY_PATH));
    assertThat(after.get(after.size() - 1).body()).contains("\"state\":\"Refused\"");
  }

  @Test
  void aPoolWithVolumesThatStopsBeingSelectedGetsOneWarningEvent() throws Exception {
    PoolReporter r = reporter(Duration.ofHours(1), Duration.ZERO);
    PoolVerdict deselected = PoolVerdict.notSelected("label soko.dev/disk is 'hdd', not 'nvme'");
    readings.set(
        new MetricsView(
            List.of(NodeReportTest.row("fast", 2), NodeReportTest.row("empty", 0)),
            List.of(
                new MetricsView.VolumeRow("pvc-1", "fast", 1L << 30, false),
                new MetricsView.VolumeRow("pvc-2", "fast", 1L << 30, false))));
    verdicts.set(Map.of("fast", deselected, "empty", deselected));

    r.onVerdicts(Map.of("fast", PoolVerdict.READY, "empty", PoolVerdict.READY));
    r.onVerdicts(Map.of("fast", deselected, "empty", deselected));
    r.onVerdicts(Map.of("fast", deselected, "empty", deselected)); // no second event
    r.report();

    Thread.sleep(300); // the write onVerdicts scheduled
    List<ApiServerFake.Request> events =
        api.drain().stream().filter(q -> q.method().equals("POST")).toList();
    assertThat(events).as("one event, for the pool that holds volumes").hasSize(1);
    assertThat(events.get(0).body())
        .contains("\"reason\":\"PoolDeselected\"")
        .contains("\"generateName\":\"node-1.pool-deselected.\"")
        .contains(
            "\"message\":\"pool fast of StorageCluster soko is no longer selected on this node"
                + " (label soko.dev/disk is 'hdd', not 'nvme'); its 2 volumes keep working, new"
                + " volumes of the pool go to other nodes\"");
  }

  @Test
  void aPoolThatIsNotSelectedFromTheStartGetsNoEvent() throws Exception {
    PoolReporter r = reporter(Duration.ofHours(1), Duration.ZERO);
    PoolVerdict unselected = PoolVerdict.notSelected("label soko.dev/disk is missing");
    readings.set(
        new MetricsView(
            List.of(NodeReportTest.row("fast", 1)),
            List.of(new MetricsView.VolumeRow("pvc-1", "fast", 1L << 30, false))));
    verdicts.set(Map.of("fast", unselected));

    r.onVerdicts(Map.of("fast", unselected));
    r.report();

    Thread.sleep(300);
    assertThat(api.drain()).noneMatch(q -> q.method().equals("POST"));
  }

  @Test
  void aFailedWriteNeverThrowsAndTheNextOneTriesAgain() throws Exception {
    PoolReporter r = reporter(Duration.ofHours(1), Duration.ZERO);
    api.status = 403;

    r.report();
    r.report();
    api.status = 200;
    r.report();

    assertThat(List.of(api.next(), api.next(), api.next()))
        .extracting(ApiServerFake.Request::uri)
        .containsOnly(APPLY_PATH);
  }

  @Test
  void anUnreachableServerNeverThrows() throws Exception {
    PoolReporter r = reporter(Duration.ofHours(1), Duration.ZERO);
    api.close();

    r.report(); // connection refused: logged, not thrown

    assertThat(api.drain()).isEmpty();
  }

  @Test
  void writesOnStartAndAgainEveryPeriod() throws Exception {
    reporter(Duration.ofMillis(200), Duration.ZERO).start();

    long start = System.nanoTime();
    api.next();
    api.next();
    api.next();

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(300));
  }

  @Test
  void verdictChangesAreWrittenAtMostOncePerMinimumInterval() throws Exception {
    PoolReporter r = reporter(Duration.ofHours(1), Duration.ofMillis(500));
    r.report();
    api.next();

    for (int i = 0; i < 20; i++) {
      r.onVerdicts(Map.of("fast", PoolVerdict.notSelected("change " + i)));
    }
    Thread.sleep(200);
    assertThat(api.drain()).as("not before the minimum interval").isEmpty();

    api.next();
    Thread.sleep(700);
    assertThat(api.drain()).as("twenty changes, one write").isEmpty();
  }

  @Test
  void thePoolsAreRecheckedOnATimerWithoutAnyCallAskingForThem() throws Exception {
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    reporter =
        new PoolReporter(
            api.client(dir, "sa-token"),
            NodeReportTest.ID,
            "0.1.0",
            Optional.empty(),
            () -> {
              asked.incrementAndGet();
              return verdicts.get();
            },
            () -> new MetricsView(List.of(NodeReportTest.row("fast", 2)), List.of()),
            CLOCK,
            Duration.ofHours(1),
            Duration.ZERO);
    reporter.startRechecking(Duration.ofMillis(20));

    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (asked.get() < 3 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(asked.get()).isGreaterThanOrEqualTo(3);
  }
}

package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import dev.soko.operator.monitoring.MonitoringFiles;
import dev.soko.operator.runtime.HealthServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real Prometheus (Debian's package) scrapes a real driver (the packaged jar, node mode, a pool
 * in a temp directory, two volumes) and the real operator (reconciling a StorageCluster on the test
 * kube-apiserver), all on 127.0.0.1, with the shipped alert rules loaded. Then every alert
 * expression and every dashboard query is put to Prometheus' HTTP API: each must evaluate, and name
 * only series that exist, so no shipped query names a metric nobody exports.
 */
class PrometheusMonitoringIT {
  private static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
  private static final Path DRIVER_JAR = Path.of("../driver/target/soko-driver.jar");
  private static final Path DRIVER_TEST_CLASSES = Path.of("../driver/target/test-classes");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static Path dir;
  private static Process driver;
  private static Process prometheus;
  private static HealthServer operatorEndpoint;
  private static URI api;
  private static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    assertThat(PROMETHEUS).as("prometheus is missing: run hack/deps.sh").isExecutable();
    assertThat(DRIVER_JAR).as("build the driver first (mvn package)").isRegularFile();
    assertThat(DRIVER_TEST_CLASSES).as("build the driver's tests first").isDirectory();
    dir = Files.createTempDirectory("soko-prometheus-it-");
    cluster = TestCluster.get();

    StorageCluster sc = Specs.cluster("prom");
    cluster.admin.resource(sc).create();
    Await.until(
        "prom reconciled",
        () -> cluster.get("prom"),
        s -> s.getStatus() != null && s.getStatus().getNodes() != null);
    operatorEndpoint =
        new HealthServer(
            new InetSocketAddress("127.0.0.1", 0),
            () -> true,
            () -> true,
            cluster.operator::scrape);

    int driverPort = freePort();
    driver = startDriver(driverPort);
    createVolumes();

    int prometheusPort = freePort();
    Files.copy(MonitoringFiles.RULES, dir.resolve("alerts.yaml"));
    Files.writeString(
        dir.resolve("prometheus.yml"),
        String.join(
            "\n",
            "global: {scrape_interval: 1s, evaluation_interval: 1s}",
            "rule_files: [alerts.yaml]",
            "scrape_configs:",
            "  - job_name: soko-driver",
            "    static_configs: [{targets: ['127.0.0.1:" + driverPort + "']}]",
            "  - job_name: soko-operator",
            "    static_configs: [{targets: ['127.0.0.1:" + operatorEndpoint.port() + "']}]",
            ""));
    prometheus =
        new ProcessBuilder(
                PROMETHEUS.toString(),
                "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + prometheusPort,
                "--log.level=warn")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("prometheus.log").toFile())
            .start();
    api = URI.create("http://127.0.0.1:" + prometheusPort + "/api/v1/");
    Await.until(
        "both targets scraped and up",
        Duration.ofSeconds(60),
        () -> get("targets?state=active"),
        t -> {
          List<String> health = new ArrayList<>();
          t.path("data").path("activeTargets").forEach(a -> health.add(a.path("health").asText()));
          return health.equals(List.of("up", "up"));
        });
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static Process startDriver(int metricsPort) throws IOException {
    Path pool = Files.createDirectories(dir.resolve("pool"));
    Path mounts = Files.createDirectories(dir.resolve("mnt"));
    return new ProcessBuilder(
            java(),
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-jar",
            DRIVER_JAR.toString(),
            "--endpoint",
            "unix://" + dir.resolve("csi.sock"),
            "--node-id",
            "prom-node",
            "--mode",
            "node",
            "--pool",
            "name=default,path=" + pool + ",capacity=1Gi",
            "--allowed-path-root",
            mounts.toString(),
            "--metrics-address",
            "127.0.0.1:" + metricsPort)
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("driver.log").toFile())
        .start();
  }

  /** Two volumes through the driver's own test client (it waits for the socket to serve). */
  private static void createVolumes() throws Exception {
    Path socket = dir.resolve("csi.sock");
    Await.until("driver socket", Duration.ofSeconds(60), () -> Files.exists(socket), ok -> ok);
    Process client =
        new ProcessBuilder(
                java(),
                "-cp",
                DRIVER_JAR + ":" + DRIVER_TEST_CLASSES,
                "dev.soko.driver.client.CreateVolumes",
                "unix://" + socket,
                "prom-a",
                Long.toString(64L << 20),
                "prom-b",
                Long.toString(128L << 20))
            .redirectErrorStream(true)
            .start();
    String out = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(client.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(client.exitValue()).as(out + "\ndriver log:\n" + log("driver.log")).isZero();
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static JsonNode get(String path) {
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(api.resolve(path)).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static JsonNode query(String promql) {
    JsonNode answer = get("query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    assertThat(answer.path("status").asText()).as(promql + " -> " + answer).isEqualTo("success");
    return answer.path("data").path("result");
  }

  /** Waits (rates need two samples in their window) until the query returns at least one series. */
  private static JsonNode series(String what, String promql) {
    return Await.until(
        what + ": " + promql, Duration.ofSeconds(60), () -> query(promql), r -> r.size() > 0);
  }

  /** Grafana's variables, as a dashboard with "All" selected sends them. */
  private static String asGrafanaSendsIt(String expr) {
    return expr.replace("$__rate_interval", "1m").replace("$node", ".*").replace("$pool", ".*");
  }

  @Test
  void everyAlertExpressionEvaluatesAndNamesOnlyExportedSeries() throws Exception {
    for (Map.Entry<String, String> alert : MonitoringFiles.alerts().entrySet()) {
      query(alert.getValue()); // evaluates (not firing here: every number is healthy)
      for (String metric : MonitoringFiles.metricNames(alert.getValue())) {
        series(alert.getKey(), metric);
      }
    }
  }

  @Test
  void prometheusLoadedEveryRuleAndEvaluatesItWithoutError() throws Exception {
    JsonNode groups =
        Await.until(
            "rules evaluated",
            Duration.ofSeconds(30),
            () -> get("rules").path("data").path("groups"),
            g ->
                g.size() > 0
                    && g.findValues("lastEvaluation").stream()
                        .noneMatch(v -> v.asText().startsWith("0001")));
    List<String> loaded = new ArrayList<>();
    for (JsonNode group : groups) {
      for (JsonNode rule : group.path("rules")) {
        loaded.add(rule.path("name").asText());
        assertThat(rule.path("health").asText()).as(rule.toString()).isEqualTo("ok");
      }
    }
    assertThat(loaded).containsExactlyInAnyOrderElementsOf(MonitoringFiles.alerts().keySet());
  }

  @Test
  void everyDashboardQueryReturnsSeries() throws Exception {
    Map<String, String> queries = MonitoringFiles.dashboardQueries();
    assertThat(queries).hasSizeGreaterThan(10);
    for (Map.Entry<String, String> panel : queries.entrySet()) {
      series(panel.getKey(), asGrafanaSendsIt(panel.getValue()));
    }
    for (String variable : MonitoringFiles.variableQueries()) {
      // label_values(METRIC{...}, LABEL): the metric must have series carrying that label.
      String inner = variable.substring("label_values(".length(), variable.lastIndexOf(','));
      String label =
          variable.substring(variable.lastIndexOf(',') + 1, variable.length() - 1).strip();
      JsonNode result = series(variable, asGrafanaSendsIt(inner));
      assertThat(result.get(0).path("metric").path(label).asText()).as(variable).isNotEmpty();
    }
  }

  @Test
  void theScrapedNumbersAreTheDriversAndTheOperators() throws Exception {
    JsonNode volumes = series("volumes", "soko_pool_volumes{node=\"prom-node\",pool=\"default\"}");
    assertThat(volumes.get(0).path("value").get(1).asText()).isEqualTo("2");
    JsonNode provisioned = series("provisioned", "soko_pool_provisioned_bytes{pool=\"default\"}");
    assertThat(provisioned.get(0).path("value").get(1).asDouble())
        .isEqualTo((64 + 128) * 1048576.0);
    series("calls", "soko_csi_rpc_seconds_count{method=\"CreateVolume\",code=\"OK\"} == 2");
    series("the StorageCluster", "soko_storagecluster_nodes_desired{storagecluster=\"prom\"}");
    series(
        "reconciles",
        "soko_operator_reconciles_total{controller=\"storagecluster\",operation=\"reconcile\"} > 0");
    // JOSDK's own meters are there too, beside Soko's.
    series("JOSDK", "operator_sdk_reconciliations_started_total");
  }

  private static String log(String name) {
    try {
      return Files.readString(dir.resolve(name));
    } catch (IOException e) {
      return "(no " + name + ")";
    }
  }

  @AfterAll
  static void stop() throws Exception {
    for (Process p : new Process[] {prometheus, driver}) {
      if (p != null && p.isAlive()) {
        p.destroy();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor();
        }
      }
    }
    if (operatorEndpoint != null) {
      operatorEndpoint.close();
    }
    if (cluster != null) {
      cluster.admin.resources(StorageCluster.class).withName("prom").delete();
    }
    if (dir != null) {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}

package dev.soko.driver.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.pool.PoolReport;
import dev.soko.driver.pool.PoolUsage;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.volume.MetricsView;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodeReportTest {
  static final Instant NOW = Instant.parse("2026-12-01T12:00:00.123Z");
  static final ReportIdentity ID = new ReportIdentity("soko", "node-1");

  static MetricsView.PoolRow row(String pool, int volumes) {
    return new MetricsView.PoolRow(
        new PoolReport(pool, new PoolUsage(1000, 400, 600), 2000, 700, 600), volumes, 1);
  }

  @Test
  void reportsEveryPoolWithItsStateAndTheOpenOnesWithPhysicalNumbers() {
    Map<String, PoolVerdict> verdicts = new LinkedHashMap<>();
    verdicts.put("fast", PoolVerdict.READY);
    verdicts.put("disk", PoolVerdict.refused("pool path %s is not a mount point", "/mnt/\"d\""));
    verdicts.put("gpu", PoolVerdict.notSelected("node selector does not match"));
    MetricsView metrics = new MetricsView(List.of(row("fast", 3)), List.of());

    String json = NodeReport.storageNode(ID, "0.1.0", Optional.empty(), NOW, verdicts, metrics);

    assertThat(json)
        .isEqualTo(
            "{\"apiVersion\":\"soko.dev/v1alpha1\",\"kind\":\"StorageNode\","
                + "\"metadata\":{\"name\":\"soko.node-1\",\"labels\":{"
                + "\"soko.dev/storagecluster\":\"soko\",\"soko.dev/node\":\"node-1\"}},"
                + "\"node\":\"node-1\",\"observedTime\":\"2026-12-01T12:00:00Z\","
                + "\"driverVersion\":\"0.1.0\",\"ready\":1,\"refused\":1,\"volumes\":3,"
                + "\"pools\":["
                + "{\"name\":\"fast\",\"state\":\"Ready\",\"sizeBytes\":1000,\"usedBytes\":400,"
                + "\"provisionedBytes\":700,\"headroomBytes\":600,\"volumes\":3},"
                + "{\"name\":\"disk\",\"state\":\"Refused\","
                + "\"message\":\"pool path /mnt/\\\"d\\\" is not a mount point\"},"
                + "{\"name\":\"gpu\",\"state\":\"NotSelected\","
                + "\"message\":\"node selector does not match\"}],"
                + "\"more\":0}");
  }

  @Test
  void aNodeWithADataPortAdvertisesItsEndpoint() {
    String json =
        NodeReport.storageNode(
            ID, "v", Optional.of("10.0.0.7:9810"), NOW, Map.of(), MetricsView.EMPTY);

    assertThat(json).contains("\"driverVersion\":\"v\",\"dataEndpoint\":\"10.0.0.7:9810\",");
  }

  @Test
  void listsAtMostThirtyTwoPoolsAndCountsTheRestButSumsAll() {
    Map<String, PoolVerdict> verdicts = new LinkedHashMap<>();
    List<MetricsView.PoolRow> rows = new java.util.ArrayList<>();
    for (int i = 0; i < 40; i++) {
      verdicts.put("p" + i, PoolVerdict.READY);
      rows.add(row("p" + i, 2));
    }

    String json =
        NodeReport.storageNode(
            ID, "v", Optional.empty(), NOW, verdicts, new MetricsView(rows, List.of()));

    assertThat(json.split("\"state\":", -1)).hasSize(NodeReport.MAX_POOLS + 1);
    assertThat(json).contains("\"name\":\"p31\"").doesNotContain("\"name\":\"p32\"");
    assertThat(json).contains("\"ready\":40,").contains("\"volumes\":80,").endsWith("\"more\":8}");
  }

  @Test
  void cutsLongMessagesToTheSchemasLimit() {
    Map<String, PoolVerdict> verdicts = Map.of("p", PoolVerdict.refused("%s", "x".repeat(5000)));

    String json =
        NodeReport.storageNode(ID, "v", Optional.empty(), NOW, verdicts, MetricsView.EMPTY);

    int start = json.indexOf("\"message\":\"") + 11;
    String message = json.substring(start, json.indexOf("\"}", start));
    assertThat(message).hasSize(NodeReport.MAX_MESSAGE).endsWith("…");
  }

  @Test
  void theRefusedEventIsAWarningOnTheNodeInNamespaceDefault() {
    String json = NodeReport.refusedEvent(ID, "disk", "pool path /d is missing", NOW);

    assertThat(json)
        .isEqualTo(
            "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
                + "\"metadata\":{\"generateName\":\"node-1.pool-refused.\",\"namespace\":\"default\"},"
                + "\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-1\","
                + "\"uid\":\"node-1\"},"
                + "\"type\":\"Warning\",\"reason\":\"PoolRefused\","
                + "\"message\":\"pool disk of StorageCluster soko refused: pool path /d is missing\","
                + "\"source\":{\"component\":\"soko-driver\",\"host\":\"node-1\"},"
                + "\"reportingComponent\":\"soko-driver\",\"reportingInstance\":\"node-1\","
                + "\"firstTimestamp\":\"2026-12-01T12:00:00Z\","
                + "\"lastTimestamp\":\"2026-12-01T12:00:00Z\",\"count\":1}");
  }

  @Test
  void twoStorageClustersOnOneNodeWriteTwoReports() {
    var a = new ReportIdentity("soko", "node-1");
    var b = new ReportIdentity("soko-fast", "node-1");

    assertThat(a.name()).isEqualTo("soko.node-1");
    assertThat(b.name()).isEqualTo("soko-fast.node-1");
    // The longest parts give a name well within an object name's 253 characters.
    String longest = "a".repeat(63);
    assertThat(new ReportIdentity(longest, longest).name()).hasSize(127);
  }

  @Test
  void anIdentityThatCannotNameAnObjectIsRefused() {
    for (String bad : List.of("Node-1", "node_1", "-node", "a".repeat(64), "a..b", "")) {
      assertThatThrownBy(() -> new ReportIdentity("soko", bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> new ReportIdentity(bad, "node-1"))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void theIdentityComesFromTheEnvironmentTheOperatorSets() {
    assertThat(ReportIdentity.fromEnvironment(Map.of(), "node-1")).isEmpty();
    assertThat(ReportIdentity.fromEnvironment(Map.of("SOKO_STORAGE_CLUSTER", "soko"), "node-1"))
        .contains(ID);
  }
}

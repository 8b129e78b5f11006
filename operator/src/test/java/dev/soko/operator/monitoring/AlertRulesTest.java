package dev.soko.operator.monitoring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped alert rules under promtool (Debian's {@code prometheus} package, hack/deps.sh):
 * {@code check rules}, the unit tests in {@code monitoring/alerts-test.yaml}, which must cover
 * every alert firing and not firing, and a mutation check per alert: with its expression broken so
 * it never fires, or always fires, the unit tests must fail. That last part is what shows the unit
 * tests can fail at all.
 */
class AlertRulesTest {
  private static final Path PROMTOOL = Path.of("/usr/bin/promtool");
  private static final String NEVER = "vector(1) < 0";
  private static final String ALWAYS = "vector(1)";

  @TempDir Path dir;

  private record Run(int exit, String output) {}

  private static Run promtool(Path workDir, String... args) throws Exception {
    assertThat(PROMTOOL)
        .as("promtool is missing: run hack/deps.sh (Debian package prometheus)")
        .isExecutable();
    List<String> command = new ArrayList<>(List.of(PROMTOOL.toString()));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
    return new Run(p.exitValue(), out);
  }

  /** The unit tests beside a copy of {@code rules} (the file they name is alerts.yaml). */
  private Run unitTests(String rules) throws Exception {
    Files.writeString(dir.resolve("alerts.yaml"), rules);
    try (InputStream in =
        AlertRulesTest.class.getResourceAsStream("/monitoring/alerts-test.yaml")) {
      Files.write(dir.resolve("alerts-test.yaml"), in.readAllBytes());
    }
    return promtool(dir, "test", "rules", "alerts-test.yaml");
  }

  @Test
  void promtoolAcceptsTheShippedRules() throws Exception {
    Run run = promtool(dir, "check", "rules", MonitoringFiles.RULES.toString());
    assertThat(run.exit()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("SUCCESS: " + MonitoringFiles.alerts().size() + " rules found");
  }

  @Test
  void theUnitTestsPass() throws Exception {
    Run run = unitTests(MonitoringFiles.read(MonitoringFiles.RULES));
    assertThat(run.exit()).as(run.output()).isZero();
    assertThat(run.output()).contains("SUCCESS");
  }

  @Test
  void everyAlertHasAFiringAndAQuietUnitTest() throws IOException {
    Set<String> firing = new HashSet<>();
    Set<String> quiet = new HashSet<>();
    JsonNode tests;
    try (InputStream in =
        AlertRulesTest.class.getResourceAsStream("/monitoring/alerts-test.yaml")) {
      tests = MonitoringFiles.YAML.readTree(in);
    }
    for (JsonNode test : tests.path("tests")) {
      for (JsonNode check : test.path("alert_rule_test")) {
        String alert = check.path("alertname").asText();
        (check.path("exp_alerts").isEmpty() ? quiet : firing).add(alert);
      }
    }
    assertThat(firing).containsExactlyInAnyOrderElementsOf(MonitoringFiles.alerts().keySet());
    assertThat(quiet).containsExactlyInAnyOrderElementsOf(MonitoringFiles.alerts().keySet());
  }

  /** Two mutants per alert: its expression never fires, or always fires; the tests must notice. */
  @TestFactory
  Stream<DynamicTest> breakingAnAlertsExpressionFailsItsUnitTests() throws IOException {
    List<DynamicTest> tests = new ArrayList<>();
    for (String alert : MonitoringFiles.alerts().keySet()) {
      for (String mutant : List.of(NEVER, ALWAYS)) {
        tests.add(
            dynamicTest(
                alert + " as " + mutant,
                () -> {
                  Run run = unitTests(withExpression(alert, mutant));
                  assertThat(run.exit()).as(run.output()).isNotZero();
                  assertThat(run.output()).contains("alertname: " + alert);
                }));
      }
    }
    return tests.stream();
  }

  private static String withExpression(String alert, String expr) throws IOException {
    JsonNode rules = MonitoringFiles.YAML.readTree(MonitoringFiles.RULES.toFile());
    for (JsonNode group : rules.path("groups")) {
      for (JsonNode rule : group.path("rules")) {
        if (alert.equals(rule.path("alert").asText())) {
          ((ObjectNode) rule).put("expr", expr);
        }
      }
    }
    return MonitoringFiles.YAML.writeValueAsString(rules);
  }

  @Test
  void theRulesNameOnlyMetricsSokoExports() throws IOException {
    // The exact list the driver and operator export; PrometheusMonitoringIT proves each exists.
    Set<String> known =
        Set.of(
            "soko_pool_size_bytes",
            "soko_pool_used_bytes",
            "soko_pool_available_bytes",
            "soko_pool_capacity_bytes",
            "soko_pool_provisioned_bytes",
            "soko_pool_headroom_bytes",
            "soko_pool_volumes",
            "soko_pool_snapshots",
            "soko_volume_capacity_bytes",
            "soko_volume_condition_abnormal",
            "soko_storagecluster_nodes_desired",
            "soko_storagecluster_nodes_ready",
            "soko_storagecluster_nodes_registered",
            "soko_storagecluster_condition",
            "soko_operator_reconcile_errors_total");
    for (Map.Entry<String, String> alert : MonitoringFiles.alerts().entrySet()) {
      assertThat(MonitoringFiles.metricNames(alert.getValue()))
          .as(alert.getKey())
          .isNotEmpty()
          .isSubsetOf(known);
    }
  }
}

package dev.soko.operator.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReconcileMetricsTest {
  private static Metrics.ControllerExecution<String> execution(String name, boolean fails) {
    return new Metrics.ControllerExecution<>() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public String controllerName() {
        return "storagecluster";
      }

      @Override
      public String successTypeName(String result) {
        return "done";
      }

      @Override
      public ResourceID resourceID() {
        return new ResourceID("alpha");
      }

      @Override
      public Map<String, Object> metadata() {
        return Map.of();
      }

      @Override
      public String execute() {
        if (fails) {
          throw new IllegalStateException("API server unreachable");
        }
        return "ok";
      }
    };
  }

  @Test
  void countsEveryCallItsErrorsAndItsDurationAndPassesTheOutcomeOn() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    ReconcileMetrics metrics = new ReconcileMetrics(Metrics.NOOP, registry);
    assertThat(metrics.timeControllerExecution(execution("reconcile", false))).isEqualTo("ok");
    assertThatThrownBy(() -> metrics.timeControllerExecution(execution("reconcile", true)))
        .hasMessage("API server unreachable");
    metrics.timeControllerExecution(execution("cleanup", false));

    String labels = "{controller=\"storagecluster\",operation=\"reconcile\"}";
    assertThat(registry.scrape())
        .contains("soko_operator_reconciles_total" + labels + " 2.0")
        .contains("soko_operator_reconcile_errors_total" + labels + " 1.0")
        .contains("soko_operator_reconcile_duration_seconds_count" + labels + " 2")
        .contains(
            "soko_operator_reconciles_total{controller=\"storagecluster\",operation=\"cleanup\"}"
                + " 1.0")
        .contains("# TYPE soko_operator_reconcile_duration_seconds histogram");
  }
}

package dev.soko.operator.runtime;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Reconcile counts, errors and durations under stable names, beside JOSDK's own {@code
 * operator_sdk_*} meters (which it delegates to). Why both: JOSDK registers its failure counters
 * only at the first failure, so an alert on them has no series to evaluate until something already
 * went wrong, and {@code increase()} misses that first error. These are registered, at zero, when
 * the controller is, for each operation (reconcile, cleanup):
 *
 * <ul>
 *   <li>{@code soko_operator_reconciles_total{controller,operation}}
 *   <li>{@code soko_operator_reconcile_errors_total{controller,operation}}
 *   <li>{@code soko_operator_reconcile_duration_seconds{controller,operation}} (histogram)
 * </ul>
 */
final class ReconcileMetrics implements Metrics {
  private static final List<String> OPERATIONS = List.of("reconcile", "cleanup");
  private static final Duration[] BUCKETS = {
    Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
    Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5),
    Duration.ofSeconds(10), Duration.ofSeconds(30)
  };

  private final Metrics delegate;
  private final MeterRegistry registry;

  ReconcileMetrics(Metrics delegate, MeterRegistry registry) {
    this.delegate = delegate;
    this.registry = registry;
  }

  private Counter reconciles(String controller, String operation) {
    return Counter.builder("soko.operator.reconciles")
        .description("Reconcile and cleanup calls of a controller")
        .tags("controller", controller, "operation", operation)
        .register(registry);
  }

  private Counter errors(String controller, String operation) {
    return Counter.builder("soko.operator.reconcile.errors")
        .description("Reconcile and cleanup calls that threw (the framework retries them)")
        .tags("controller", controller, "operation", operation)
        .register(registry);
  }

  private Timer duration(String controller, String operation) {
    return Timer.builder("soko.operator.reconcile.duration")
        .description("Time a reconcile or cleanup call took")
        .tags("controller", controller, "operation", operation)
        .serviceLevelObjectives(BUCKETS)
        .register(registry);
  }

  @Override
  public void controllerRegistered(Controller<? extends HasMetadata> controller) {
    String name = controller.getConfiguration().getName();
    for (String operation : OPERATIONS) {
      reconciles(name, operation);
      errors(name, operation);
      duration(name, operation);
    }
    delegate.controllerRegistered(controller);
  }

  @Override
  public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
    String controller = execution.controllerName();
    String operation = execution.name();
    long start = System.nanoTime();
    try {
      return delegate.timeControllerExecution(execution);
    } catch (Exception | Error e) {
      errors(controller, operation).increment();
      throw e;
    } finally {
      reconciles(controller, operation).increment();
      duration(controller, operation).record(Duration.ofNanos(System.nanoTime() - start));
    }
  }

  // ---- the rest only delegates ------------------------------------------------------------

  @Override
  public void receivedEvent(Event event, Map<String, Object> metadata) {
    delegate.receivedEvent(event, metadata);
  }

  @Override
  public void reconcileCustomResource(
      HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    delegate.reconcileCustomResource(resource, retryInfo, metadata);
  }

  @Override
  public void failedReconciliation(
      HasMetadata resource, Exception exception, Map<String, Object> metadata) {
    delegate.failedReconciliation(resource, exception, metadata);
  }

  @Override
  public void reconciliationExecutionStarted(HasMetadata resource, Map<String, Object> metadata) {
    delegate.reconciliationExecutionStarted(resource, metadata);
  }

  @Override
  public void reconciliationExecutionFinished(HasMetadata resource, Map<String, Object> metadata) {
    delegate.reconciliationExecutionFinished(resource, metadata);
  }

  @Override
  public void cleanupDoneFor(ResourceID resourceID, Map<String, Object> metadata) {
    delegate.cleanupDoneFor(resourceID, metadata);
  }

  @Override
  public void finishedReconciliation(HasMetadata resource, Map<String, Object> metadata) {
    delegate.finishedReconciliation(resource, metadata);
  }

  @Override
  public <T extends Map<?, ?>> T monitorSizeOf(T map, String name) {
    return delegate.monitorSizeOf(map, name);
  }
}

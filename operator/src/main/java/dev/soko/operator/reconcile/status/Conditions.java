package dev.soko.operator.reconcile.status;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** Builds a condition list that keeps lastTransitionTime when a condition's status is unchanged. */
public final class Conditions {
  public static final String READY = "Ready";
  static final String PROGRESSING = "Progressing";
  public static final String DEGRADED = "Degraded";
  public static final String COMPATIBLE = "Compatible";

  private final List<Condition> previous;
  private final long generation;
  private final String now;
  private final List<Condition> result = new ArrayList<>();

  Conditions(List<Condition> previous, long generation, String now) {
    this.previous = previous == null ? List.of() : previous;
    this.generation = generation;
    this.now = now;
  }

  Conditions set(String type, boolean status, String reason, String message) {
    String value = status ? "True" : "False";
    String since =
        previous.stream()
            .filter(c -> type.equals(c.getType()) && value.equals(c.getStatus()))
            .map(Condition::getLastTransitionTime)
            .filter(Objects::nonNull)
            .findFirst()
            .orElse(now);
    result.add(
        new ConditionBuilder()
            .withType(type)
            .withStatus(value)
            .withReason(reason)
            .withMessage(message)
            .withObservedGeneration(generation)
            .withLastTransitionTime(since)
            .build());
    return this;
  }

  List<Condition> build() {
    return result;
  }

  public static Condition find(List<Condition> conditions, String type) {
    return conditions == null
        ? null
        : conditions.stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
  }
}

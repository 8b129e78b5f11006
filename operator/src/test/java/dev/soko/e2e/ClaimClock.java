package dev.soko.e2e;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When each claim of a round reached each stage, as its watches saw it (System.nanoTime at the
 * event's arrival): created (just before the create request), node selected (the scheduler's
 * WaitForFirstConsumer annotation), Bound, its pod scheduled, its pod Running. Watch arrival, not
 * the objects' timestamps, because those have whole-second resolution.
 */
final class ClaimClock {
  static final String SELECTED_NODE = "volume.kubernetes.io/selected-node";

  final Map<String, Long> created = new ConcurrentHashMap<>();
  final Map<String, Long> nodeSelected = new ConcurrentHashMap<>();
  final Map<String, Long> bound = new ConcurrentHashMap<>();
  final Map<String, Long> podScheduled = new ConcurrentHashMap<>();
  final Map<String, Long> running = new ConcurrentHashMap<>();

  /** A claim's state as a watch delivered it. */
  void saw(PersistentVolumeClaim claim) {
    long now = System.nanoTime();
    String name = claim.getMetadata().getName();
    Map<String, String> annotations = claim.getMetadata().getAnnotations();
    if (annotations != null && annotations.containsKey(SELECTED_NODE)) {
      nodeSelected.putIfAbsent(name, now);
    }
    if (claim.getStatus() != null && "Bound".equals(claim.getStatus().getPhase())) {
      bound.putIfAbsent(name, now);
    }
  }

  /** A pod's state as a watch delivered it; each pod is named after its claim. */
  void saw(Pod pod) {
    long now = System.nanoTime();
    String name = pod.getMetadata().getName();
    if (pod.getSpec().getNodeName() != null) {
      podScheduled.putIfAbsent(name, now);
    }
    if (pod.getStatus() != null && "Running".equals(pod.getStatus().getPhase())) {
      running.putIfAbsent(name, now);
    }
  }

  /**
   * Milliseconds from stage {@code from} to stage {@code to}, for every claim that reached both.
   */
  static Spread between(Map<String, Long> from, Map<String, Long> to) {
    return Spread.of(
        to.entrySet().stream()
            .filter(e -> from.containsKey(e.getKey()))
            .mapToLong(e -> (e.getValue() - from.get(e.getKey())) / 1_000_000)
            .toArray());
  }

  /** The nanoTime at which the last claim reached the stage, 0 when none did. */
  static long last(Map<String, Long> stage) {
    return stage.values().stream().mapToLong(Long::longValue).max().orElse(0);
  }
}

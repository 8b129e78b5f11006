package dev.soko.operator.nodeloss;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * spec.nodeLoss for snapshots: a VolumeSnapshot whose content belongs to a gone Node ({@link
 * LostSnapshot}) gets one Warning saying so, and with policy Delete, once the Node has been gone
 * for deleteAfter (counted as for its volumes), a content whose VolumeSnapshot is being deleted is
 * released ({@link SnapshotContentWrites#release}) so that the deletion completes.
 */
final class SnapshotLoss {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotLoss.class);

  /** What one reconcile did: content names released per Node, and when to look again. */
  record Outcome(Map<String, List<String>> released, Duration next) {}

  /**
   * How often to look again while a due content labelled with a gone Node waits for its
   * VolumeSnapshot's deletion: such contents are not in the informer's cache.
   */
  static final Duration WATCH = Duration.ofMinutes(1);

  private final SnapshotContentWrites writes;
  private final SnapshotEvents events;

  /** UID of each content whose VolumeSnapshot was warned of; forgotten once it is not lost. */
  private final Map<String, String> warned = new ConcurrentHashMap<>();

  /** "cluster/content" of releases that failed and were reported. */
  private final Set<String> failing = ConcurrentHashMap.newKeySet();

  SnapshotLoss(SnapshotContentWrites writes, SnapshotEvents events) {
    this.writes = writes;
    this.events = events;
  }

  /**
   * @param lostSince when each gone Node with volumes of the driver was first seen gone
   * @param unlabelled the cached contents without the managed-by label, of every driver
   */
  Outcome reconcile(
      StorageCluster sc,
      Policy policy,
      Set<String> nodes,
      List<Orphan> orphans,
      List<PersistentVolume> pvs,
      List<GenericKubernetesResource> unlabelled,
      Map<String, Instant> lostSince,
      Instant now) {
    String name = sc.getMetadata().getName();
    String driver = sc.getSpec().getDriver().getName();
    List<GenericKubernetesResource> contents = new ArrayList<>(unlabelled);
    try {
      contents.addAll(writes.managedBy(lostSince.keySet()));
    } catch (KubernetesClientException e) {
      LOG.warn("{}: could not list the snapshot contents of gone Nodes: {}", name, e.getMessage());
      return new Outcome(Map.of(), Plan.RETRY);
    }
    List<LostSnapshot> lost = LostSnapshots.find(driver, nodes, orphans, pvs, contents);
    Set<String> present = new HashSet<>();
    Map<String, List<String>> released = new TreeMap<>();
    Instant next = null;
    boolean retry = false;
    boolean watch = false;
    for (LostSnapshot s : lost) {
      present.add(s.uid());
      Instant since = lostSince.getOrDefault(s.node(), now);
      Instant at = policy.delete() ? since.plus(policy.deleteAfter()) : null;
      if (warned.putIfAbsent(s.uid(), driver) == null) {
        events.lost(sc, policy, s, at);
      }
      if (at == null) {
        continue;
      }
      if (now.isBefore(at)) {
        next = next == null || at.isBefore(next) ? at : next;
        continue;
      }
      if (!s.deletionAsked()) {
        // Its VolumeSnapshot may be deleted at any time; a labelled content is not in the
        // informer's cache, so no event would bring the reconcile back.
        watch |= s.labelled();
        continue;
      }
      if (!s.heldBySnapshotter()) {
        continue;
      }
      try {
        writes.release(s);
        failing.remove(name + "/" + s.content());
        released.computeIfAbsent(s.node(), n -> new ArrayList<>()).add(s.content());
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404 || e.getCode() == 422) {
          continue; // gone, or changed meanwhile: looked at again on the next reconcile
        }
        retry = true;
        LOG.warn("{}: releasing snapshot content {} failed: {}", name, s.content(), e.getMessage());
        if (failing.add(name + "/" + s.content())) {
          events.failed(sc, s, e);
        }
      }
    }
    released.forEach((node, names) -> events.released(sc, policy, node, names));
    warned.entrySet().removeIf(e -> e.getValue().equals(driver) && !present.contains(e.getKey()));
    Duration wait = next == null ? null : Duration.between(now, next).plusSeconds(1);
    Duration again = retry ? Plan.RETRY : watch ? WATCH : null;
    if (again != null && (wait == null || wait.compareTo(again) > 0)) {
      wait = again;
    }
    return new Outcome(released, wait);
  }
}

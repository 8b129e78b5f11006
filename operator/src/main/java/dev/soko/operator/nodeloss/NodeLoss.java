package dev.soko.operator.nodeloss;

import dev.soko.api.v1alpha1.OrphanedVolume;
import dev.soko.api.v1alpha1.OrphanedVolumes;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * spec.nodeLoss: finds the driver's PVs bound to deleted Nodes, reports them, and with policy
 * Delete deletes their claims and the PVs once the delay has passed. Their snapshots likewise
 * ({@link SnapshotLoss}): a Warning on each VolumeSnapshot, and with Delete, from the same moment,
 * the content of a VolumeSnapshot being deleted released. The reconciler calls {@link #reconcile}
 * after applying its objects and puts the report into the status.
 */
public final class NodeLoss {
  private static final Logger LOG = LoggerFactory.getLogger(NodeLoss.class);

  /** Records one event on a StorageCluster. */
  @FunctionalInterface
  public interface EventSink {
    void record(StorageCluster sc, String reason, String message);
  }

  /** Records one event on another object (a VolumeSnapshot, in its namespace). */
  @FunctionalInterface
  public interface ObjectEventSink {
    void record(HasMetadata object, String reason, String message);
  }

  /**
   * The report for status.orphanedVolumes (null: none) and when to reconcile again (null: no
   * deletion pending).
   */
  public record Outcome(OrphanedVolumes report, Duration next) {}

  private final VolumeMarks marks;
  private final Events events;
  private final Supplier<Instant> clock;
  private final SnapshotLoss snapshots;

  /** When each missing Node was first seen missing, per StorageCluster (for Retain's report). */
  private final Map<String, Map<String, Instant>> missing = new ConcurrentHashMap<>();

  /** "cluster/pv" of deletions that failed and were reported; reported again only after success. */
  private final Set<String> failing = ConcurrentHashMap.newKeySet();

  /**
   * @param onObject records a Warning on a VolumeSnapshot whose content belongs to a gone Node
   */
  public NodeLoss(
      KubernetesClient client, EventSink normal, EventSink warning, ObjectEventSink onObject) {
    this(
        new VolumeMarks(client),
        new SnapshotContentWrites(client),
        normal,
        warning,
        onObject,
        Instant::now);
  }

  NodeLoss(
      VolumeMarks marks,
      SnapshotContentWrites contents,
      EventSink normal,
      EventSink warning,
      ObjectEventSink onObject,
      Supplier<Instant> clock) {
    this.marks = marks;
    this.events = new Events(normal, warning);
    this.snapshots = new SnapshotLoss(contents, new SnapshotEvents(onObject, warning));
    this.clock = clock;
  }

  /**
   * @param inventory the Nodes and PVs, from the operator's informers
   */
  public Outcome reconcile(StorageCluster sc, Inventory inventory) {
    String name = sc.getMetadata().getName();
    String driver = sc.getSpec().getDriver().getName();
    Set<String> nodes = inventory.nodeNames();
    List<PersistentVolume> pvs = inventory.volumesOf(driver);
    OrphanedVolumes previous = sc.getStatus() == null ? null : sc.getStatus().getOrphanedVolumes();
    if (nodes.isEmpty()) {
      // No Node at all: a cache or permission problem is far likelier than a cluster without
      // nodes (this operator runs on one). Keep the last report; change nothing.
      return new Outcome(previous, null);
    }
    Instant now = clock.get().truncatedTo(ChronoUnit.SECONDS);
    Policy policy = Policy.of(sc.getSpec().getNodeLoss());
    List<Orphan> orphans = OrphanFinder.find(driver, nodes, pvs);
    Map<String, Instant> since = missing.computeIfAbsent(name, k -> seed(previous, now));
    Set<String> lostNodes = orphans.stream().map(Orphan::node).collect(Collectors.toSet());
    Set<String> known = Set.copyOf(since.keySet());
    lostNodes.forEach(n -> since.putIfAbsent(n, now));

    Plan plan =
        Plan.of(policy, orphans, OrphanFinder.returned(driver, nodes, pvs), Map.copyOf(since), now);
    events.lost(sc, policy, plan.report(), orphans, lostNodes, known);
    Set<String> back =
        known.stream()
            .filter(n -> !lostNodes.contains(n) && nodes.contains(n))
            .collect(Collectors.toSet());
    events.returned(sc, policy, back);
    since.keySet().retainAll(lostNodes);
    Map<String, Instant> lostSince = Map.copyOf(since);
    if (since.isEmpty()) {
      missing.remove(name);
    }

    boolean written = write(sc, plan.mark(), pv -> marks.mark(pv, now), "mark");
    written &= write(sc, plan.unmark(), marks::unmark, "unmark");
    Map<String, PersistentVolume> byName = new HashMap<>();
    pvs.forEach(pv -> byName.put(pv.getMetadata().getName(), pv));
    Map<String, List<String>> deleted = new TreeMap<>();
    for (Orphan o : plan.due()) {
      try {
        String what = marks.delete(o, byName.get(o.pv()));
        failing.remove(name + "/" + o.pv());
        if (!o.deleting()) {
          deleted.computeIfAbsent(o.node(), n -> new ArrayList<>()).add(what);
        }
      } catch (KubernetesClientException e) {
        LOG.warn("{}: deleting orphaned volume {} failed: {}", name, o.pv(), e.getMessage());
        if (failing.add(name + "/" + o.pv())) {
          events.failed(sc, o, e);
        }
      }
    }
    deleted.forEach((node, what) -> events.deleted(sc, policy, node, what));
    Duration next = plan.next();
    if (inventory.snapshotsServed()) {
      SnapshotLoss.Outcome snaps =
          snapshots.reconcile(
              sc,
              policy,
              nodes,
              orphans,
              pvs,
              inventory.unlabelledSnapshotContents(),
              lostSince,
              now);
      next = earliest(next, snaps.next());
    }
    if (!written && (next == null || next.compareTo(Plan.RETRY) > 0)) {
      next = Plan.RETRY;
    }
    return new Outcome(plan.report(), next);
  }

  private static Duration earliest(Duration a, Duration b) {
    return a == null ? b : b == null ? a : a.compareTo(b) <= 0 ? a : b;
  }

  /** After a restart: the Nodes the last status listed count as known, with their times. */
  private static Map<String, Instant> seed(OrphanedVolumes previous, Instant now) {
    Map<String, Instant> since = new ConcurrentHashMap<>();
    if (previous == null) {
      return since;
    }
    if (previous.volumes() != null) {
      for (OrphanedVolume v : previous.volumes()) {
        try {
          Instant t = Instant.parse(v.since());
          since.merge(v.node(), t, (a, b) -> a.isBefore(b) ? a : b);
        } catch (RuntimeException e) {
          // An unreadable time counts from now.
        }
      }
    }
    if (previous.nodes() != null) {
      previous.nodes().forEach(n -> since.putIfAbsent(n, now));
    }
    return since;
  }

  /** Writes each PV; false when one was refused (logged; tried again on a later reconcile). */
  private static boolean write(
      StorageCluster sc, List<String> pvs, java.util.function.Consumer<String> op, String what) {
    boolean ok = true;
    for (String pv : pvs) {
      try {
        op.accept(pv);
      } catch (KubernetesClientException e) {
        ok = false;
        LOG.warn("{}: could not {} {}: {}", sc.getMetadata().getName(), what, pv, e.getMessage());
      }
    }
    return ok;
  }
}

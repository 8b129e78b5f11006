package dev.soko.operator.reconcile.observe;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.reconcile.kinds.StorageNodeChanges;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which of the node drivers' StorageNode reports a StorageCluster's status uses, which nodes are
 * silent, and which reports are left over and deleted. Pure: the caches' contents come in.
 *
 * <p>A report is fresh for {@link #STALE_AFTER} after the driver took its readings: the driver
 * writes every 60 s (jittered by up to 5 % either way), so a fresh report has missed at most two
 * writes. The times are the driver's clock against the operator's: a node clock minutes behind
 * makes its node look silent, never healthier than it is.
 */
public final class StorageNodeReports {
  static final Duration STALE_AFTER = Duration.ofMinutes(3);

  /**
   * What the status reads from the reports.
   *
   * @param watched whether the StorageNode API is served and cached; when not, nothing is known
   * @param fresh this StorageCluster's fresh reports, one per node
   * @param silent nodes that run the node plugin or reported before, without a fresh report
   * @param recheck when the first fresh report goes stale (the reconcile that notices it); null
   *     when none is fresh
   * @param leftOver reports to delete: their Node or StorageCluster is gone, or they are stale on a
   *     node the node plugin no longer runs on
   */
  public record Observed(
      boolean watched,
      List<StorageNode> fresh,
      Set<String> silent,
      Duration recheck,
      List<StorageNode> leftOver) {
    public static final Observed UNWATCHED =
        new Observed(false, List.of(), Set.of(), null, List.of());
  }

  private StorageNodeReports() {}

  /**
   * @param reports every cached report with Soko's label, of any StorageCluster
   * @param cluster this StorageCluster's name
   * @param clusters the names of every StorageCluster
   * @param nodes the cluster's Node names; empty when unknown (a cache or permission problem is
   *     likelier than a cluster without nodes: then no report counts as left over for its Node)
   * @param pluginNodes the nodes with a node plugin pod
   * @param pluginNodesKnown whether the DaemonSet's status is observed, so that a node without a
   *     pod is one the node plugin does not run on (not one whose pod is not cached yet)
   */
  public static Observed observe(
      List<StorageNode> reports,
      String cluster,
      Set<String> clusters,
      Set<String> nodes,
      Set<String> pluginNodes,
      boolean pluginNodesKnown,
      Instant now) {
    List<StorageNode> fresh = new ArrayList<>();
    List<StorageNode> leftOver = new ArrayList<>();
    Set<String> silent = new TreeSet<>(pluginNodes);
    Set<String> reporting = new HashSet<>();
    Instant firstExpiry = null;
    for (StorageNode report : reports) {
      String owner = StorageNodeChanges.owner(report);
      String node = report.getNode();
      boolean nodeGone = !nodes.isEmpty() && (node == null || !nodes.contains(node));
      if (!clusters.contains(owner) || (cluster.equals(owner) && nodeGone)) {
        leftOver.add(report);
        continue;
      }
      if (!cluster.equals(owner)) {
        continue;
      }
      Optional<Instant> expiry = observedAt(report).map(t -> t.plus(STALE_AFTER));
      if (expiry.isPresent() && expiry.get().isAfter(now)) {
        fresh.add(report);
        reporting.add(node);
        firstExpiry =
            firstExpiry == null || expiry.get().isBefore(firstExpiry) ? expiry.get() : firstExpiry;
      } else if (pluginNodesKnown && !pluginNodes.contains(node)) {
        // Stale where no node plugin runs any more (its node left the node selector).
        leftOver.add(report);
      } else {
        silent.add(node);
      }
    }
    silent.removeAll(reporting);
    Duration recheck =
        firstExpiry == null ? null : Duration.between(now, firstExpiry).plusSeconds(1);
    return new Observed(true, fresh, silent, recheck, leftOver);
  }

  /** When the driver took the readings; empty when the report has no readable time. */
  static Optional<Instant> observedAt(StorageNode report) {
    try {
      return Optional.ofNullable(report.getObservedTime()).map(Instant::parse);
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }
}

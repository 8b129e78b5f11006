package dev.soko.operator.nodeloss;

import dev.soko.api.v1alpha1.OrphanedVolume;
import dev.soko.api.v1alpha1.OrphanedVolumes;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The events of node-loss handling, on the StorageCluster: on transitions only (a Node newly seen
 * missing, a Node back, volumes deleted, a failed deletion), never on a resync that changes
 * nothing. Names are bounded: at most {@link #NAMES} per event and "and N more".
 */
final class Events {
  static final int NAMES = 10;
  static final String NODE_LOST = "NodeLost";
  static final String NODE_RETURNED = "NodeReturned";
  static final String DELETED = "OrphanedVolumesDeleted";
  static final String DELETE_FAILED = "OrphanedVolumeDeleteFailed";

  private final NodeLoss.EventSink normal;
  private final NodeLoss.EventSink warning;

  Events(NodeLoss.EventSink normal, NodeLoss.EventSink warning) {
    this.normal = normal;
    this.warning = warning;
  }

  /** A Warning per Node newly seen missing (at most NAMES, then one summary). */
  void lost(
      StorageCluster sc,
      Policy policy,
      OrphanedVolumes report,
      List<Orphan> orphans,
      Set<String> lostNodes,
      Set<String> known) {
    TreeSet<String> fresh = new TreeSet<>(lostNodes);
    fresh.removeAll(known);
    int n = 0;
    for (String node : fresh) {
      if (++n > NAMES) {
        warning.record(
            sc,
            NODE_LOST,
            (fresh.size() - NAMES)
                + " more Nodes are gone with volumes of "
                + driver(sc)
                + "; see status.orphanedVolumes");
        return;
      }
      List<Orphan> mine = orphans.stream().filter(o -> o.node().equals(node)).toList();
      warning.record(sc, NODE_LOST, lostMessage(sc, policy, report, node, mine));
    }
  }

  private static String lostMessage(
      StorageCluster sc, Policy policy, OrphanedVolumes report, String node, List<Orphan> mine) {
    List<String> names =
        mine.stream()
            .map(o -> o.claim() == null ? o.pv() : o.pv() + " (" + o.claim() + ")")
            .toList();
    String what =
        "Node "
            + node
            + " is gone; "
            + mine.size()
            + " PersistentVolume(s) of "
            + driver(sc)
            + " are orphaned: "
            + bounded(names)
            + ". ";
    boolean deletes = policy.delete() && mine.stream().anyMatch(o -> !o.keepByReclaimPolicy());
    if (!deletes) {
      return what
          + policy.describe()
          + ": nothing is deleted; if "
          + node
          + " comes back under its name with its pool, the volumes are usable again.";
    }
    String at =
        report == null || report.volumes() == null
            ? null
            : report.volumes().stream()
                .filter(v -> node.equals(v.node()) && v.at() != null)
                .map(OrphanedVolume::at)
                .findFirst()
                .orElse(null);
    return what
        + policy.describe()
        + ": their claims and volumes will be deleted"
        + (at == null ? "" : " at " + at)
        + " unless "
        + node
        + " comes back first"
        + (mine.stream().anyMatch(Orphan::keepByReclaimPolicy)
            ? "; volumes whose reclaimPolicy is Retain are kept."
            : ".");
  }

  void returned(StorageCluster sc, Policy policy, Set<String> back) {
    for (String node : new TreeSet<>(back)) {
      normal.record(
          sc,
          NODE_RETURNED,
          "Node "
              + node
              + " is back; its volumes of "
              + driver(sc)
              + " are no longer orphaned"
              + (policy.delete() ? " and their pending deletion is cancelled." : "."));
    }
  }

  void deleted(StorageCluster sc, Policy policy, String node, List<String> what) {
    warning.record(
        sc,
        DELETED,
        "Deleted "
            + bounded(what)
            + " of Node "
            + node
            + ", gone for longer than "
            + Policy.format(policy.deleteAfter())
            + " ("
            + policy.describe()
            + ").");
  }

  void failed(StorageCluster sc, Orphan o, KubernetesClientException e) {
    warning.record(
        sc,
        DELETE_FAILED,
        "Could not delete orphaned PersistentVolume "
            + o.pv()
            + " of Node "
            + o.node()
            + " (retrying): "
            + e.getMessage());
  }

  static String bounded(List<String> names) {
    if (names.size() <= NAMES) {
      return String.join(", ", names);
    }
    return String.join(", ", names.subList(0, NAMES)) + " and " + (names.size() - NAMES) + " more";
  }

  private static String driver(StorageCluster sc) {
    return sc.getSpec().getDriver().getName();
  }
}

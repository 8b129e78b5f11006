package dev.soko.operator.nodeloss;

import dev.soko.api.v1alpha1.OrphanedVolume;
import dev.soko.api.v1alpha1.OrphanedVolumes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * What one reconcile does about orphaned volumes, computed without I/O: which PVs to mark, which
 * marks to remove, which volumes are due for deletion, the bounded status report, and when to look
 * again.
 *
 * @param mark PVs to mark as orphaned since {@code now} (policy Delete, not yet marked)
 * @param unmark PVs whose mark must go: their Node is back, or the policy is Retain
 * @param due orphans whose delay has passed, to delete now
 * @param report null when nothing is orphaned
 * @param next when to reconcile again for a pending deletion; null when nothing is pending
 */
record Plan(
    List<String> mark,
    List<String> unmark,
    List<Orphan> due,
    OrphanedVolumes report,
    Duration next) {
  /** Deletion requested but a finalizer we own the removal of is still there: try again. */
  static final Duration RETRY = Duration.ofSeconds(30);

  /**
   * @param returned marked PVs whose Node exists again
   * @param nodeSince when each missing Node was first seen missing (for Retain's report)
   * @param now truncated to seconds, so that a mark written now reads back equal
   */
  static Plan of(
      Policy policy,
      List<Orphan> orphans,
      List<String> returned,
      Map<String, Instant> nodeSince,
      Instant now) {
    List<String> mark = new ArrayList<>();
    List<String> unmark = new ArrayList<>(returned);
    List<Orphan> due = new ArrayList<>();
    List<OrphanedVolume> entries = new ArrayList<>();
    Instant next = null;
    boolean retry = false;
    for (Orphan o : orphans) {
      Instant firstSeen = nodeSince.getOrDefault(o.node(), now);
      boolean deletes = policy.delete() && !o.keepByReclaimPolicy();
      if (!deletes) {
        if (o.markedSince() != null && !o.deleting()) {
          unmark.add(o.pv());
        }
        entries.add(
            entry(
                o,
                firstSeen,
                o.deleting() ? OrphanedVolume.DELETING : OrphanedVolume.RETAIN,
                null));
        continue;
      }
      Instant since = o.markedSince() != null ? o.markedSince() : now;
      Instant at = since.plus(policy.deleteAfter());
      if (o.deleting()) {
        retry |= o.provisionerFinalizer();
        if (o.provisionerFinalizer()) {
          due.add(o);
        }
        entries.add(entry(o, since, OrphanedVolume.DELETING, at));
      } else if (o.markedSince() == null) {
        mark.add(o.pv());
        next = earliest(next, at);
        entries.add(entry(o, since, OrphanedVolume.DELETE, at));
      } else if (!now.isBefore(at)) {
        due.add(o);
        retry = true;
        entries.add(entry(o, since, OrphanedVolume.DELETING, at));
      } else {
        next = earliest(next, at);
        entries.add(entry(o, since, OrphanedVolume.DELETE, at));
      }
    }
    Duration wait = next == null ? null : Duration.between(now, next).plusSeconds(1);
    if (retry && (wait == null || wait.compareTo(RETRY) > 0)) {
      wait = RETRY;
    }
    return new Plan(mark, unmark, due, report(entries), wait);
  }

  private static Instant earliest(Instant a, Instant b) {
    return a == null || b.isBefore(a) ? b : a;
  }

  private static OrphanedVolume entry(Orphan o, Instant since, String action, Instant at) {
    return new OrphanedVolume(
        o.pv(), o.claim(), o.node(), since.toString(), action, at == null ? null : at.toString());
  }

  /** Soonest action first (deletions by due time, then kept volumes), at most LIMIT listed. */
  static OrphanedVolumes report(List<OrphanedVolume> entries) {
    if (entries.isEmpty()) {
      return null;
    }
    List<OrphanedVolume> sorted = new ArrayList<>(entries);
    sorted.sort(
        Comparator.comparing((OrphanedVolume e) -> e.at() == null ? "~" : e.at())
            .thenComparing(OrphanedVolume::since)
            .thenComparing(OrphanedVolume::pv));
    TreeSet<String> nodes = new TreeSet<>();
    entries.forEach(e -> nodes.add(e.node()));
    int limit = OrphanedVolumes.LIMIT;
    List<OrphanedVolume> listed = List.copyOf(sorted.subList(0, Math.min(limit, sorted.size())));
    return new OrphanedVolumes(
        entries.size(),
        nodes.stream().limit(limit).toList(),
        listed,
        entries.size() > listed.size() ? entries.size() - listed.size() : null);
  }
}

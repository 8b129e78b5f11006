package dev.soko.e2e;

import dev.soko.e2e.ProvisionBench.RoundResult;
import java.util.List;
import java.util.Optional;

/**
 * The benchmark's Markdown: provisioning per round, the stages a claim goes through, Soko's
 * deletion, and a verdict per target for each Soko round, judged against the local-path round of
 * the same run and claim count.
 */
final class ProvisionTables {
  static final double TARGET_AVERAGE_BOUND_SECONDS = 10;
  static final double TARGET_CLAIMS_PER_SECOND = 5;

  private final List<RoundResult> results;

  ProvisionTables(List<RoundResult> results) {
    this.results = results;
  }

  String markdown() throws Exception {
    StringBuilder out = new StringBuilder();
    out.append(
        """
        | Run | Provisioner | Claims | Load at start | PVC→Bound p50 / p99 / max (s) | PVC→Bound avg (s) \
        | PVC/s to last Bound | PVC→Running p50 / p99 / max (s) | PVC/s to last Running |
        |---|---|---:|---|---|---:|---:|---|---:|
        """);
    for (RoundResult r : results) {
      ClaimClock c = r.round().clock;
      Spread bound = ClaimClock.between(c.created, c.bound);
      Spread running = ClaimClock.between(c.created, c.running);
      out.append(
          "| %d | %s | %d | %s | %s | %.1f | %.2f | %s | %.2f |%n"
              .formatted(
                  r.run(),
                  r.provisioner(),
                  r.round().count(),
                  r.load(),
                  bound.summary() + missing(bound, r),
                  bound.mean(),
                  perSecond(bound.count(), r.round().firstCreate, ClaimClock.last(c.bound)),
                  running.summary() + missing(running, r),
                  perSecond(running.count(), r.round().firstCreate, ClaimClock.last(c.running))));
    }
    out.append(
        """

        Stages, p50 / p99 (s), each claim from its own previous stage:

        | Run | Provisioner | Claims | Create all (s) | created → node selected | selected → Bound \
        | Bound → pod scheduled | scheduled → Running |
        |---|---|---:|---:|---|---|---|---|
        """);
    for (RoundResult r : results) {
      ClaimClock c = r.round().clock;
      out.append(
          "| %d | %s | %d | %.1f | %s | %s | %s | %s |%n"
              .formatted(
                  r.run(),
                  r.provisioner(),
                  r.round().count(),
                  (r.round().lastCreate - r.round().firstCreate) / 1e9,
                  p50p99(ClaimClock.between(c.created, c.nodeSelected)),
                  p50p99(ClaimClock.between(c.nodeSelected, c.bound)),
                  p50p99(ClaimClock.between(c.bound, c.podScheduled)),
                  p50p99(ClaimClock.between(c.podScheduled, c.running))));
    }
    out.append(
        """

        Deletion (Soko), seconds from deleting every pod and claim at once:

        | Run | Claims | Last PV gone | Last image gone from the pools | Pools' free space back \
        | PV/s |
        |---|---:|---:|---:|---:|---:|
        """);
    for (RoundResult r : results) {
      if (r.drain() == null) {
        continue;
      }
      ProvisionRound round = r.round();
      out.append(
          "| %d | %d | %.1f | %s | %s | %.2f |%n"
              .formatted(
                  r.run(),
                  round.count(),
                  (round.lastVolumeGone - round.deleteStarted) / 1e9,
                  since(round.deleteStarted, r.drain().imagesGone),
                  since(round.deleteStarted, r.drain().spaceBack),
                  round.count() / ((round.lastVolumeGone - round.deleteStarted) / 1e9)));
    }
    out.append(
        """

        The node plugins' CSI calls during each Soko round (provisioning and deletion), count × mean:

        | Run | Claims | Calls |
        |---|---:|---|
        """);
    for (RoundResult r : results) {
      if (r.driverCalls() != null) {
        out.append("| %d | %d | %s |%n".formatted(r.run(), r.round().count(), r.driverCalls()));
      }
    }
    out.append(
        """

        Verdicts (targets: average PVC→Bound ≤ %.0f s; ≥ %.0f PVC/s to last Bound; PVC→Running \
        p50 ≤ half of local-path's in the same run):

        | Run | Claims | Average PVC→Bound | PVC/s | Running p50 vs local-path's |
        |---|---:|---|---|---|
        """
            .formatted(TARGET_AVERAGE_BOUND_SECONDS, TARGET_CLAIMS_PER_SECOND));
    for (RoundResult r : results) {
      if (!ProvisionBench.SOKO.equals(r.provisioner())) {
        continue;
      }
      ClaimClock c = r.round().clock;
      Spread bound = ClaimClock.between(c.created, c.bound);
      double rate = perSecond(bound.count(), r.round().firstCreate, ClaimClock.last(c.bound));
      double runningP50 = ClaimClock.between(c.created, c.running).percentile(50);
      String versus =
          localPath(r)
              .map(
                  lp -> {
                    double theirs =
                        ClaimClock.between(lp.round().clock.created, lp.round().clock.running)
                            .percentile(50);
                    return "%s: %.1f s vs %.1f s (%.2f×)"
                        .formatted(
                            verdict(runningP50 <= theirs / 2),
                            runningP50,
                            theirs,
                            runningP50 / theirs);
                  })
              .orElse("no local-path round");
      out.append(
          "| %d | %d | %s: %.1f s | %s: %.2f | %s |%n"
              .formatted(
                  r.run(),
                  r.round().count(),
                  verdict(complete(bound, r) && bound.mean() <= TARGET_AVERAGE_BOUND_SECONDS),
                  bound.mean(),
                  verdict(complete(bound, r) && rate >= TARGET_CLAIMS_PER_SECOND),
                  rate,
                  versus));
    }
    return out.toString();
  }

  private Optional<RoundResult> localPath(RoundResult soko) {
    return results.stream()
        .filter(r -> ProvisionBench.LOCAL_PATH.equals(r.provisioner()))
        .filter(r -> r.run() == soko.run() && r.round().count() == soko.round().count())
        .findFirst();
  }

  private static boolean complete(Spread s, RoundResult r) {
    return s.count() == r.round().count();
  }

  private static String missing(Spread s, RoundResult r) {
    return complete(s, r) ? "" : " (only %d of %d)".formatted(s.count(), r.round().count());
  }

  private static String verdict(boolean met) {
    return met ? "met" : "missed";
  }

  private static String p50p99(Spread s) {
    return "%.1f / %.1f".formatted(s.percentile(50), s.percentile(99));
  }

  private static String since(long start, long end) {
    return end == 0 ? "not within the timeout" : "%.1f".formatted((end - start) / 1e9);
  }

  /** Claims per second from the first create to {@code last}. */
  private static double perSecond(int claims, long first, long last) {
    return last <= first ? 0 : claims / ((last - first) / 1e9);
  }
}

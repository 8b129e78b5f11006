package dev.soko.operator.reconcile.status;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.PoolSummaryStatus;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.api.v1alpha1.StorageNodePool;
import dev.soko.operator.reconcile.observe.StorageNodeReports;
import java.util.ArrayList;
import java.util.List;

/**
 * status.poolSummary: per spec pool, its nodes by state and the sums of what they report. Every
 * node that runs the node plugin or has reported is counted once per pool: Ready, Refused,
 * NotSelected, or not reporting (no fresh report, or a fresh one without the pool, as from a driver
 * not yet rolled out with a new pool).
 */
final class PoolCounts {
  private PoolCounts() {}

  static List<PoolSummaryStatus> of(StorageClusterSpec spec, StorageNodeReports.Observed reports) {
    int nodes = reports.fresh().size() + reports.silent().size();
    List<PoolSummaryStatus> out = new ArrayList<>();
    for (PoolSpec pool : spec.getPools()) {
      Sum sum = new Sum();
      for (StorageNode report : reports.fresh()) {
        if (report.getPools() != null) {
          report.getPools().stream()
              .filter(p -> pool.getName().equals(p.name()))
              .findFirst()
              .ifPresent(sum::add);
        }
      }
      out.add(
          new PoolSummaryStatus(
              pool.getName(),
              sum.ready,
              sum.refused,
              sum.notSelected,
              nodes - sum.ready - sum.refused - sum.notSelected,
              sum.size,
              sum.used,
              sum.provisioned,
              sum.volumes));
    }
    return out;
  }

  /** One pool's counts and sums over the nodes that report it. */
  private static final class Sum {
    int ready;
    int refused;
    int notSelected;
    long size;
    long used;
    long provisioned;
    int volumes;

    void add(StorageNodePool p) {
      switch (p.state()) {
        case StorageNodePool.READY -> ready++;
        case StorageNodePool.REFUSED -> refused++;
        case StorageNodePool.NOT_SELECTED -> notSelected++;
        default -> {
          // A state this operator does not know (a newer driver): the node counts as silent.
          return;
        }
      }
      size += p.sizeBytes() == null ? 0 : p.sizeBytes();
      used += p.usedBytes() == null ? 0 : p.usedBytes();
      provisioned += p.provisionedBytes() == null ? 0 : p.provisionedBytes();
      volumes += p.volumes() == null ? 0 : p.volumes();
    }
  }
}

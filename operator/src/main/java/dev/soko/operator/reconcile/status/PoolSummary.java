package dev.soko.operator.reconcile.status;

import dev.soko.api.v1alpha1.CapacityStatus;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.PoolStatus;
import dev.soko.api.v1alpha1.PoolSummaryStatus;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.api.v1alpha1.StorageNodePool;
import dev.soko.operator.reconcile.observe.StorageNodeReports;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pools in the status, per node and pool: from a node's fresh StorageNode report (state,
 * physical numbers, headroom) and, for a node without one (an older driver, a report not written
 * yet, or the StorageNode API not served), from the CSIStorageCapacity objects its provisioner
 * publishes. The status lists at most {@link #LISTED} pairs, refused ones first and then the
 * fullest (least available), and sums over all of them, so it does not grow with the cluster. Pools
 * a node is not configured for (NotSelected) are counted in the summary, never listed.
 */
public final class PoolSummary {
  static final String TOPOLOGY_KEY = "topology.soko.dev/node";
  static final int LISTED = 10;
  private static final String[] UNITS = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

  /** Up to here (512 PiB) a byte count times ten fits in a long. */
  private static final BigDecimal LARGEST_WHOLE = BigDecimal.valueOf((1L << 59) - 1);

  /**
   * @param more pairs not listed
   * @param capacity sums over pools whose total is known; null when none is
   * @param summary one entry per spec pool; null when the reports are not watched
   * @param refused every refused pair, by node and pool (for the Degraded condition)
   * @param recheck when the first fresh report goes stale; null when none is fresh
   */
  public record Result(
      List<PoolStatus> listed,
      int more,
      CapacityStatus capacity,
      List<PoolSummaryStatus> summary,
      List<PoolStatus> refused,
      Duration recheck) {}

  private PoolSummary() {}

  /** From CSIStorageCapacity alone (no reports watched). */
  static Result of(StorageClusterSpec spec, List<CSIStorageCapacity> capacities) {
    return of(spec, StorageNodeReports.Observed.UNWATCHED, capacities);
  }

  public static Result of(
      StorageClusterSpec spec,
      StorageNodeReports.Observed reports,
      List<CSIStorageCapacity> capacities) {
    List<PoolStatus> all = pools(spec, reports.fresh(), capacities);
    // Parsed once per pair, not in the comparator (~20,000 parses a reconcile at 1,000 nodes).
    Map<PoolStatus, BigDecimal> available = new HashMap<>();
    all.forEach(
        p -> available.put(p, p.available() == null ? null : bytes(new Quantity(p.available()))));
    List<PoolStatus> ordered = new ArrayList<>(all);
    ordered.sort(
        Comparator.comparing((PoolStatus p) -> !StorageNodePool.REFUSED.equals(p.state()))
            .thenComparing(
                available::get, Comparator.nullsLast(Comparator.<BigDecimal>naturalOrder()))
            .thenComparing(PoolStatus::node)
            .thenComparing(PoolStatus::pool));
    List<PoolStatus> listed = List.copyOf(ordered.subList(0, Math.min(LISTED, ordered.size())));
    List<PoolStatus> refused =
        all.stream().filter(p -> StorageNodePool.REFUSED.equals(p.state())).toList();
    return new Result(
        listed,
        all.size() - listed.size(),
        summary(all),
        reports.watched() ? PoolCounts.of(spec, reports) : null,
        refused,
        reports.recheck());
  }

  /** Per node and pool, sorted by node and pool: reports first, capacities for the other nodes. */
  static List<PoolStatus> pools(
      StorageClusterSpec spec, List<StorageNode> reports, List<CSIStorageCapacity> capacities) {
    Map<String, String> totalOfPool = new LinkedHashMap<>();
    for (PoolSpec p : spec.getPools()) {
      totalOfPool.put(p.getName(), p.getCapacity());
    }
    List<PoolStatus> out = new ArrayList<>();
    Set<String> reported = new HashSet<>();
    for (StorageNode report : reports) {
      reported.add(report.getNode());
      for (StorageNodePool p :
          report.getPools() == null ? List.<StorageNodePool>of() : report.getPools()) {
        if (totalOfPool.containsKey(p.name()) && !StorageNodePool.NOT_SELECTED.equals(p.state())) {
          out.add(fromReport(report.getNode(), p, totalOfPool.get(p.name())));
        }
      }
    }
    Map<String, String> poolOfClass = new HashMap<>();
    for (StorageClassSpec c : spec.getStorageClasses()) {
      poolOfClass.put(c.getName(), c.getPool());
    }
    Map<String, PoolStatus> byNodeAndPool = new LinkedHashMap<>();
    for (CSIStorageCapacity cap : capacities) {
      String pool = poolOfClass.get(cap.getStorageClassName());
      String node = node(cap);
      if (pool == null || node == null || cap.getCapacity() == null || reported.contains(node)) {
        continue;
      }
      byNodeAndPool.putIfAbsent(
          node + "/" + pool,
          new PoolStatus(node, pool, totalOfPool.get(pool), format(bytes(cap.getCapacity()))));
    }
    out.addAll(byNodeAndPool.values());
    out.sort(Comparator.comparing(PoolStatus::node).thenComparing(PoolStatus::pool));
    return out;
  }

  private static PoolStatus fromReport(String node, StorageNodePool p, String configured) {
    String total =
        configured != null
            ? configured
            : p.sizeBytes() == null ? null : format(BigDecimal.valueOf(p.sizeBytes()));
    return new PoolStatus(
        node,
        p.name(),
        total,
        p.headroomBytes() == null ? null : format(BigDecimal.valueOf(p.headroomBytes())),
        p.state(),
        p.message(),
        p.sizeBytes(),
        p.usedBytes(),
        p.provisionedBytes(),
        p.volumes());
  }

  private static String node(CSIStorageCapacity cap) {
    if (cap.getNodeTopology() == null || cap.getNodeTopology().getMatchLabels() == null) {
      return null;
    }
    return cap.getNodeTopology().getMatchLabels().get(TOPOLOGY_KEY);
  }

  /** Sums over pools whose total and availability are known; null when none is. */
  static CapacityStatus summary(List<PoolStatus> pools) {
    BigDecimal total = BigDecimal.ZERO;
    BigDecimal used = BigDecimal.ZERO;
    boolean known = false;
    for (PoolStatus p : pools) {
      if (p.total() == null || p.available() == null) {
        continue;
      }
      known = true;
      BigDecimal t = bytes(new Quantity(p.total()));
      total = total.add(t);
      used = used.add(t.subtract(bytes(new Quantity(p.available()))).max(BigDecimal.ZERO));
    }
    return known ? new CapacityStatus(format(total), format(used)) : null;
  }

  private static BigDecimal bytes(Quantity q) {
    return q.getNumericalAmount();
  }

  /**
   * Bytes as a binary-suffixed quantity with at most one decimal, e.g. 12.5Gi. It runs for every
   * pool at every reconcile, so whole byte counts (all real ones) take integer arithmetic: the
   * exact BigDecimal divisions of {@link #formatExact} allocated a few kilobytes a call, megabytes
   * a reconcile at 1,000 nodes. Both give the same text.
   */
  static String format(BigDecimal bytes) {
    if (bytes.signum() < 0 || bytes.compareTo(LARGEST_WHOLE) > 0 || !isWhole(bytes)) {
      return formatExact(bytes);
    }
    long b = bytes.longValue();
    int unit = b == 0 ? 0 : Math.min(UNITS.length - 1, (63 - Long.numberOfLeadingZeros(b)) / 10);
    int shift = 10 * unit;
    // Tenths of the unit, rounded half up; b < 2^59, so b * 10 cannot overflow.
    long tenths = unit == 0 ? b * 10 : (b * 10 + (1L << (shift - 1))) >> shift;
    return (tenths % 10 == 0 ? Long.toString(tenths / 10) : tenths / 10 + "." + tenths % 10)
        + UNITS[unit];
  }

  private static boolean isWhole(BigDecimal d) {
    return d.scale() <= 0 || d.remainder(BigDecimal.ONE).signum() == 0;
  }

  /** {@link #format} for any amount (fractional bytes, beyond 512 PiB), by exact division. */
  static String formatExact(BigDecimal bytes) {
    BigDecimal value = bytes;
    int unit = 0;
    BigDecimal k = BigDecimal.valueOf(1024);
    while (unit < UNITS.length - 1 && value.compareTo(k) >= 0) {
      value = value.divide(k);
      unit++;
    }
    return value.setScale(1, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString()
        + UNITS[unit];
  }
}

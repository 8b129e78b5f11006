package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.CapacityStatus;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.PoolStatus;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pool capacity for the status, from the CSIStorageCapacity objects the node provisioners publish:
 * the sums over every pool and node, and at most {@link #LISTED} pool-node pairs, the fullest
 * (least available) first, so status does not grow with the cluster.
 */
final class PoolSummary {
  static final String TOPOLOGY_KEY = "topology.soko.dev/node";
  static final int LISTED = 10;
  private static final String[] UNITS = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

  /** Up to here (512 PiB) a byte count times ten fits in a long. */
  private static final BigDecimal LARGEST_WHOLE = BigDecimal.valueOf((1L << 59) - 1);

  /**
   * @param more pairs not listed
   * @param capacity sums over pools whose total is known; null when none is
   */
  record Result(List<PoolStatus> listed, int more, CapacityStatus capacity) {}

  private PoolSummary() {}

  static Result of(StorageClusterSpec spec, List<CSIStorageCapacity> capacities) {
    List<PoolStatus> all = pools(spec, capacities);
    // Parsed once per pool, not in the comparator (~20,000 parses a reconcile at 1,000 nodes).
    Map<PoolStatus, BigDecimal> available = new HashMap<>();
    all.forEach(p -> available.put(p, bytes(new Quantity(p.available()))));
    List<PoolStatus> fullest = new ArrayList<>(all);
    fullest.sort(
        Comparator.comparing((PoolStatus p) -> available.get(p))
            .thenComparing(PoolStatus::node)
            .thenComparing(PoolStatus::pool));
    List<PoolStatus> listed = List.copyOf(fullest.subList(0, Math.min(LISTED, fullest.size())));
    return new Result(listed, all.size() - listed.size(), summary(all));
  }

  /**
   * Per node and pool: the configured total and the available capacity the provisioner published.
   */
  static List<PoolStatus> pools(StorageClusterSpec spec, List<CSIStorageCapacity> capacities) {
    Map<String, String> poolOfClass = new HashMap<>();
    for (StorageClassSpec c : spec.getStorageClasses()) {
      poolOfClass.put(c.getName(), c.getPool());
    }
    Map<String, String> totalOfPool = new HashMap<>();
    for (PoolSpec p : spec.getPools()) {
      totalOfPool.put(p.getName(), p.getCapacity());
    }
    Map<String, PoolStatus> byNodeAndPool = new LinkedHashMap<>();
    for (CSIStorageCapacity cap : capacities) {
      String pool = poolOfClass.get(cap.getStorageClassName());
      String node = node(cap);
      if (pool == null || node == null || cap.getCapacity() == null) {
        continue;
      }
      byNodeAndPool.putIfAbsent(
          node + "/" + pool,
          new PoolStatus(node, pool, totalOfPool.get(pool), format(bytes(cap.getCapacity()))));
    }
    List<PoolStatus> out = new ArrayList<>(byNodeAndPool.values());
    out.sort(Comparator.comparing(PoolStatus::node).thenComparing(PoolStatus::pool));
    return out;
  }

  private static String node(CSIStorageCapacity cap) {
    if (cap.getNodeTopology() == null || cap.getNodeTopology().getMatchLabels() == null) {
      return null;
    }
    return cap.getNodeTopology().getMatchLabels().get(TOPOLOGY_KEY);
  }

  /** Sums over pools whose total is known; null when none is. */
  static CapacityStatus summary(List<PoolStatus> pools) {
    BigDecimal total = BigDecimal.ZERO;
    BigDecimal used = BigDecimal.ZERO;
    boolean known = false;
    for (PoolStatus p : pools) {
      if (p.total() == null) {
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

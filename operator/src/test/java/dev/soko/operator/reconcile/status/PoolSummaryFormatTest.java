package dev.soko.operator.reconcile.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.model.Fixtures;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The pool summary runs over every node at every reconcile: its formatting gives the exact
 * division's text, and at 1,000 nodes it allocates little, so a reconcile does not fill the
 * operator's small heap.
 */
class PoolSummaryFormatTest {
  @Test
  void wholeByteCountsFormatAsTheExactDivisionDoes() {
    List<Long> values = new ArrayList<>(List.of(0L, 1L, 1023L, 1024L, 1025L, (1L << 59) - 1));
    for (int shift = 10; shift <= 58; shift += 10) {
      long unit = 1L << shift;
      for (long k : new long[] {1, 5, 10, 1023, 1024}) {
        values.add(k * unit - 1);
        values.add(k * unit);
        values.add(k * unit + 1);
        // Halves and twentieths: where rounding to one decimal goes up or down.
        values.add(k * unit + unit / 20);
        values.add(k * unit + unit / 20 - 1);
        values.add(k * unit + unit / 2);
      }
    }
    Random random = new Random(12);
    for (int i = 0; i < 20_000; i++) {
      values.add(random.nextLong() >>> (5 + random.nextInt(58)));
    }
    for (long v : values) {
      BigDecimal bytes = BigDecimal.valueOf(v);
      assertThat(PoolSummary.format(bytes))
          .as("%d bytes", v)
          .isEqualTo(PoolSummary.formatExact(bytes));
    }
    assertThat(PoolSummary.format(BigDecimal.valueOf(1536L << 20))).isEqualTo("1.5Gi");
    assertThat(PoolSummary.format(BigDecimal.valueOf((10L << 30) + (1L << 30) / 10)))
        .isEqualTo("10.1Gi");
    // Half a tenth rounds up.
    assertThat(PoolSummary.format(BigDecimal.valueOf((10L << 30) + (1L << 30) / 4)))
        .isEqualTo("10.3Gi");
    // A whole count with a scale, as a Quantity of "1.5Gi" yields it.
    assertThat(PoolSummary.format(new BigDecimal("1610612736.0"))).isEqualTo("1.5Gi");
  }

  @Test
  void fractionalAndHugeAmountsStillFormat() {
    assertThat(PoolSummary.format(new BigDecimal("1.5"))).isEqualTo("1.5");
    assertThat(PoolSummary.format(new BigDecimal("0.04"))).isEqualTo("0");
    assertThat(PoolSummary.format(BigDecimal.valueOf(1L << 60))).isEqualTo("1Ei");
    assertThat(PoolSummary.format(BigDecimal.valueOf(1L << 60).multiply(BigDecimal.TEN)))
        .isEqualTo("10Ei");
  }

  @Test
  void summarisingAThousandNodesAllocatesAFewKilobytesPerNode() {
    var spec = Fixtures.sample().getSpec();
    List<CSIStorageCapacity> capacities = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      capacities.add(
          new CSIStorageCapacityBuilder()
              .withStorageClassName("soko-nvme")
              .withNewNodeTopology()
              .addToMatchLabels(PoolSummary.TOPOLOGY_KEY, String.format("n%04d", i))
              .endNodeTopology()
              .withNewCapacity((10 + i % 37) + "Gi")
              .build());
    }
    PoolSummary.of(spec, capacities); // warm up: class loading and constants are not per call
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(id);
    PoolSummary.of(spec, capacities);
    long allocated = threads.getThreadAllocatedBytes(id) - before;
    // Parsing in the sort's comparator and BigDecimal division in format allocated 22 MB here,
    // a quarter of the operator's heap at every reconcile; now about 4 MB.
    assertThat(allocated).as("bytes allocated").isLessThan(8_000_000);
  }
}

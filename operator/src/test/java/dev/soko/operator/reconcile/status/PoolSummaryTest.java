package dev.soko.operator.reconcile.status;

import static dev.soko.operator.reconcile.observe.Reports.NOW;
import static dev.soko.operator.reconcile.observe.Reports.notSelected;
import static dev.soko.operator.reconcile.observe.Reports.ready;
import static dev.soko.operator.reconcile.observe.Reports.refused;
import static dev.soko.operator.reconcile.observe.Reports.report;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.PoolStatus;
import dev.soko.api.v1alpha1.PoolSummaryStatus;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.reconcile.observe.StorageNodeReports;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PoolSummaryTest {
  static final long GI = 1L << 30;

  /** The sample (pool nvme, 100Gi) plus a pool "disk" without a configured capacity. */
  static StorageCluster twoPools() {
    StorageCluster sc = Fixtures.sample();
    PoolSpec disk = new PoolSpec();
    disk.setName("disk");
    disk.setPath("/mnt/disk");
    sc.getSpec().getPools().add(disk);
    return sc;
  }

  static StorageNodeReports.Observed observed(List<StorageNode> reports, Set<String> pods) {
    return StorageNodeReports.observe(reports, "fast", Set.of("fast"), Set.of(), pods, false, NOW);
  }

  static CSIStorageCapacity capacity(String node, String quantity) {
    return new CSIStorageCapacityBuilder()
        .withStorageClassName("soko-nvme")
        .withNewNodeTopology()
        .addToMatchLabels("topology.soko.dev/node", node)
        .endNodeTopology()
        .withNewCapacity(quantity)
        .build();
  }

  @Test
  void refusedPairsComeFirstThenTheFullestAndTheListStopsAtTen() {
    List<StorageNode> reports = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      // Headroom falls with i, so n19 is the fullest; n07 and n13 refuse disk.
      reports.add(
          report(
              "fast",
              String.format("n%02d", i),
              NOW,
              ready("nvme", 100 * GI, i * GI, (100 - i) * GI, i),
              i == 7 || i == 13
                  ? refused("disk", "pool path /mnt/disk is missing")
                  : notSelected("disk")));
    }

    PoolSummary.Result r =
        PoolSummary.of(twoPools().getSpec(), observed(reports, Set.of()), List.of());

    assertThat(r.listed())
        .extracting(p -> p.node() + "/" + p.pool())
        .containsExactly(
            "n07/disk",
            "n13/disk",
            "n19/nvme",
            "n18/nvme",
            "n17/nvme",
            "n16/nvme",
            "n15/nvme",
            "n14/nvme",
            "n13/nvme",
            "n12/nvme");
    assertThat(r.more()).as("20 nvme + 2 disk pairs; NotSelected ones are not pairs").isEqualTo(12);
    assertThat(r.refused()).extracting(PoolStatus::node).containsExactly("n07", "n13");
    PoolStatus fullest = r.listed().get(2);
    assertThat(fullest.state()).isEqualTo("Ready");
    assertThat(fullest.total()).isEqualTo("100Gi");
    assertThat(fullest.available()).isEqualTo("81Gi");
    assertThat(fullest.sizeBytes()).isEqualTo(100 * GI);
    assertThat(fullest.usedBytes()).isEqualTo(19 * GI);
    assertThat(fullest.volumes()).isEqualTo(19);
    assertThat(r.listed().get(0).message()).isEqualTo("pool path /mnt/disk is missing");
  }

  @Test
  void theSummaryCountsNodesPerStateAndSumsWhatTheyReport() {
    List<StorageNode> reports =
        List.of(
            report(
                "fast",
                "n1",
                NOW,
                ready("nvme", 100 * GI, 10 * GI, 90 * GI, 2),
                ready("disk", 50 * GI, 5 * GI, 45 * GI, 1)),
            report(
                "fast",
                "n2",
                NOW,
                ready("nvme", 100 * GI, 30 * GI, 70 * GI, 3),
                refused("disk", "not a mount point")),
            report("fast", "n3", NOW, ready("nvme", 200 * GI, 0, 200 * GI, 0), notSelected("disk")),
            // A driver that does not know "disk" yet (rolling out): silent for that pool.
            report("fast", "n4", NOW, ready("nvme", 100 * GI, 0, 100 * GI, 0)),
            report("fast", "n5", NOW.minusSeconds(3600), ready("nvme", 100 * GI, 0, 100 * GI, 0)));

    List<PoolSummaryStatus> summary =
        PoolSummary.of(twoPools().getSpec(), observed(reports, Set.of("n6")), List.of()).summary();

    assertThat(summary)
        .containsExactly(
            new PoolSummaryStatus("nvme", 4, 0, 0, 2, 500 * GI, 40 * GI, 40 * GI, 5),
            new PoolSummaryStatus("disk", 1, 1, 1, 3, 50 * GI, 5 * GI, 5 * GI, 1));
  }

  @Test
  void aNodeWithoutAReportKeepsItsCapacityFromCsiStorageCapacity() {
    List<StorageNode> reports =
        List.of(report("fast", "n1", NOW, ready("nvme", 100 * GI, 10 * GI, 30 * GI, 1)));
    List<CSIStorageCapacity> capacities = List.of(capacity("n1", "99Gi"), capacity("n2", "40Gi"));

    PoolSummary.Result r =
        PoolSummary.of(Fixtures.sample().getSpec(), observed(reports, Set.of()), capacities);

    assertThat(r.listed())
        .extracting(PoolStatus::node, PoolStatus::available, PoolStatus::state)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("n1", "30Gi", "Ready"),
            org.assertj.core.groups.Tuple.tuple("n2", "40Gi", null));
    assertThat(r.capacity().total()).isEqualTo("200Gi");
    assertThat(r.capacity().used()).isEqualTo("130Gi");
  }

  @Test
  void withoutAConfiguredCapacityThePoolsTotalIsItsFilesystemSize() {
    List<StorageNode> reports =
        List.of(
            report(
                "fast",
                "n1",
                NOW,
                ready("nvme", 10 * GI, 1 * GI, 9 * GI, 0),
                ready("disk", 50 * GI, 5 * GI, 45 * GI, 1)));

    PoolSummary.Result r =
        PoolSummary.of(twoPools().getSpec(), observed(reports, Set.of()), List.of());

    assertThat(r.listed())
        .filteredOn(p -> p.pool().equals("disk"))
        .extracting(PoolStatus::total)
        .containsExactly("50Gi");
    assertThat(r.capacity().total()).isEqualTo("150Gi");
  }

  @Test
  void withoutTheStorageNodeApiThereIsNoSummaryAndCapacityStillComesFromCsiStorageCapacity() {
    PoolSummary.Result r =
        PoolSummary.of(Fixtures.sample().getSpec(), List.of(capacity("n1", "40Gi")));

    assertThat(r.summary()).isNull();
    assertThat(r.listed()).extracting(PoolStatus::available).containsExactly("40Gi");
    assertThat(r.recheck()).isNull();
  }

  @Test
  void aThousandNodesKeepTheStatusBounded() {
    List<StorageNode> reports = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      reports.add(
          report(
              "fast",
              String.format("n%04d", i),
              NOW,
              ready("nvme", 100 * GI, GI, 99 * GI, 1),
              i % 100 == 0 ? refused("disk", "x".repeat(1024)) : ready("disk", GI, 0, GI, 0)));
    }

    PoolSummary.Result r =
        PoolSummary.of(twoPools().getSpec(), observed(reports, Set.of()), List.of());

    assertThat(r.listed()).hasSize(PoolSummary.LISTED);
    assertThat(r.listed()).allMatch(p -> p.state().equals("Refused"));
    assertThat(r.more()).isEqualTo(1990);
    assertThat(r.summary()).hasSize(2);
    assertThat(r.summary().get(1).refused()).isEqualTo(10);
    assertThat(r.summary().get(0).volumes()).isEqualTo(1000);
  }
}

package dev.soko.operator.reconcile.observe;

import static dev.soko.operator.reconcile.observe.Reports.NOW;
import static dev.soko.operator.reconcile.observe.Reports.ready;
import static dev.soko.operator.reconcile.observe.Reports.refused;
import static dev.soko.operator.reconcile.observe.Reports.report;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.reconcile.kinds.StorageNodeChanges;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StorageNodeReportsTest {
  static final Set<String> CLUSTERS = Set.of("a", "b");
  static final Set<String> NODES = Set.of("n1", "n2", "n3");

  static StorageNodeReports.Observed observe(List<StorageNode> reports, Set<String> pods) {
    return StorageNodeReports.observe(reports, "a", CLUSTERS, NODES, pods, false, NOW);
  }

  @Test
  void aReportIsFreshForThreeMinutesAfterItsReadingsAndThenTheNodeIsSilent() {
    StorageNode justFresh = report("a", "n1", NOW.minusSeconds(179), ready("p", 10, 1, 9, 0));
    StorageNode justStale = report("a", "n2", NOW.minusSeconds(180), ready("p", 10, 1, 9, 0));

    StorageNodeReports.Observed o = observe(List.of(justFresh, justStale), Set.of());

    assertThat(o.fresh()).containsExactly(justFresh);
    assertThat(o.silent()).containsExactly("n2");
    assertThat(o.leftOver()).isEmpty();
    // The reconcile that notices n1 go stale: 1 s after its three minutes are up.
    assertThat(o.recheck()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void theFirstReportToGoStaleSetsTheRecheck() {
    StorageNodeReports.Observed o =
        observe(
            List.of(
                report("a", "n1", NOW.minusSeconds(10), ready("p", 10, 1, 9, 0)),
                report("a", "n2", NOW.minusSeconds(100), ready("p", 10, 1, 9, 0))),
            Set.of());

    assertThat(o.recheck()).isEqualTo(Duration.ofSeconds(81));
    assertThat(observe(List.of(), Set.of()).recheck()).isNull();
  }

  @Test
  void aReportWithoutAReadableTimeIsStale() {
    StorageNode r = report("a", "n1", NOW, ready("p", 10, 1, 9, 0));
    r.setObservedTime("yesterday");

    assertThat(observe(List.of(r), Set.of()).silent()).containsExactly("n1");
  }

  @Test
  void nodesThatRunTheNodePluginWithoutAReportAreSilent() {
    StorageNodeReports.Observed o =
        observe(List.of(report("a", "n1", NOW, ready("p", 10, 1, 9, 0))), Set.of("n1", "n2", "n3"));

    assertThat(o.silent()).containsExactly("n2", "n3");
  }

  @Test
  void anotherStorageClustersReportsAreNotThisOnes() {
    StorageNode other = report("b", "n1", NOW, refused("p", "missing"));

    StorageNodeReports.Observed o = observe(List.of(other), Set.of());

    assertThat(o.fresh()).isEmpty();
    assertThat(o.silent()).isEmpty();
    assertThat(o.leftOver()).isEmpty();
  }

  @Test
  void reportsOfAGoneNodeOrAGoneStorageClusterAreLeftOver() {
    StorageNode gone = report("a", "n9", NOW, ready("p", 10, 1, 9, 0));
    StorageNode uninstalled = report("c", "n1", NOW, ready("p", 10, 1, 9, 0));
    StorageNode otherOnGoneNode = report("b", "n9", NOW, ready("p", 10, 1, 9, 0));

    StorageNodeReports.Observed o = observe(List.of(gone, uninstalled, otherOnGoneNode), Set.of());

    assertThat(o.leftOver()).containsExactly(gone, uninstalled);
    assertThat(o.fresh()).isEmpty();
  }

  @Test
  void withoutNodesKnownNoReportIsLeftOverForItsNode() {
    StorageNode r = report("a", "n9", NOW, ready("p", 10, 1, 9, 0));

    StorageNodeReports.Observed o =
        StorageNodeReports.observe(List.of(r), "a", CLUSTERS, Set.of(), Set.of(), false, NOW);

    assertThat(o.leftOver()).isEmpty();
    assertThat(o.fresh()).containsExactly(r);
  }

  @Test
  void aStaleReportWhereTheNodePluginNoLongerRunsIsLeftOverOnceTheDaemonSetIsObserved() {
    StorageNode stale = report("a", "n2", NOW.minusSeconds(600), ready("p", 10, 1, 9, 0));
    StorageNode fresh = report("a", "n3", NOW, ready("p", 10, 1, 9, 0));

    StorageNodeReports.Observed unknown =
        StorageNodeReports.observe(
            List.of(stale, fresh), "a", CLUSTERS, NODES, Set.of("n1"), false, NOW);
    StorageNodeReports.Observed known =
        StorageNodeReports.observe(
            List.of(stale, fresh), "a", CLUSTERS, NODES, Set.of("n1"), true, NOW);

    assertThat(unknown.leftOver()).isEmpty();
    assertThat(unknown.silent()).containsExactly("n1", "n2");
    assertThat(known.leftOver()).containsExactly(stale);
    assertThat(known.silent()).containsExactly("n1");
    // A fresh report stays, pod or not (the pod may not be cached yet).
    assertThat(known.fresh()).containsExactly(fresh);
  }

  @Test
  void onlyARewriteThatChangesAStateMessageOrCountReconciles() {
    StorageNode before = report("a", "n1", NOW, ready("p", 10, 1, 9, 2), refused("q", "missing"));

    StorageNode readings =
        report("a", "n1", NOW.plusSeconds(60), ready("p", 10, 5, 5, 2), refused("q", "missing"));
    StorageNode state =
        report("a", "n1", NOW.plusSeconds(60), ready("p", 10, 1, 9, 2), ready("q", 1, 0, 1, 0));
    StorageNode message =
        report("a", "n1", NOW, ready("p", 10, 1, 9, 2), refused("q", "not a mount point"));
    StorageNode volumes = report("a", "n1", NOW, ready("p", 10, 1, 9, 3), refused("q", "missing"));

    assertThat(StorageNodeChanges.changesStatus(readings, before)).isFalse();
    assertThat(StorageNodeChanges.changesStatus(state, before)).isTrue();
    assertThat(StorageNodeChanges.changesStatus(message, before)).isTrue();
    assertThat(StorageNodeChanges.changesStatus(volumes, before)).isTrue();
  }
}

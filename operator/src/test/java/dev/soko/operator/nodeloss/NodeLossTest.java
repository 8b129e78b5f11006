package dev.soko.operator.nodeloss;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.NodeLossSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The facade with a hand-written inventory and a recording fake of the writes. */
class NodeLossTest {
  final AtomicReference<Instant> clock =
      new AtomicReference<>(Instant.parse("2026-12-01T12:00:00Z"));
  final List<String> events = new ArrayList<>();
  final List<String> writes = new ArrayList<>();
  final Set<String> nodes = new HashSet<>(Set.of("keep"));
  final List<PersistentVolume> pvs = new ArrayList<>();
  boolean refuse;

  final Inventory inventory =
      new Inventory() {
        @Override
        public Set<String> nodeNames() {
          return Set.copyOf(nodes);
        }

        @Override
        public List<PersistentVolume> volumesOf(String driver) {
          return List.copyOf(pvs);
        }
      };

  final VolumeMarks marks =
      new VolumeMarks(null) {
        @Override
        void mark(String pv, Instant since) {
          writes.add("mark " + pv + " " + since);
          refuseIfAsked();
          replace(pv, Volumes.marked(pv, node(pv), since.toString()));
        }

        @Override
        void unmark(String pv) {
          writes.add("unmark " + pv);
          replace(pv, Volumes.soko(pv, node(pv)));
        }

        @Override
        String delete(Orphan o, PersistentVolume cached) {
          writes.add("delete " + o.pv());
          refuseIfAsked();
          pvs.removeIf(p -> p.getMetadata().getName().equals(o.pv()));
          return "claim " + o.claim() + " and PersistentVolume " + o.pv();
        }
      };

  final NodeLoss loss =
      new NodeLoss(
          marks,
          new SnapshotContentWrites(null),
          (sc, reason, message) -> events.add("Normal " + reason + ": " + message),
          (sc, reason, message) -> events.add("Warning " + reason + ": " + message),
          (o, reason, message) -> events.add("Warning " + reason + ": " + message),
          clock::get);

  void refuseIfAsked() {
    if (refuse) {
      throw new KubernetesClientException("forbidden", 403, null);
    }
  }

  void replace(String name, PersistentVolume pv) {
    pvs.replaceAll(p -> p.getMetadata().getName().equals(name) ? pv : p);
  }

  String node(String pv) {
    return pvs.stream()
        .filter(p -> p.getMetadata().getName().equals(pv))
        .findFirst()
        .map(p -> OrphanFinder.nodes(p).iterator().next())
        .orElseThrow();
  }

  static StorageCluster cluster(NodeLossSpec.Policy policy) {
    StorageCluster sc = new StorageCluster();
    sc.setMetadata(new ObjectMetaBuilder().withName("local").build());
    sc.setSpec(new StorageClusterSpec());
    sc.getSpec().getNodeLoss().setPolicy(policy);
    sc.getSpec().getNodeLoss().setDeleteAfter("10m");
    return sc;
  }

  /** What the reconciler does: the report goes into the status the next reconcile reads. */
  NodeLoss.Outcome run(StorageCluster sc) {
    NodeLoss.Outcome out = loss.reconcile(sc, inventory);
    StorageClusterStatus status = new StorageClusterStatus();
    status.setOrphanedVolumes(out.report());
    sc.setStatus(status);
    return out;
  }

  @Test
  void retainReportsOnceAndClearsWhenTheNodeReturns() {
    pvs.add(Volumes.soko("pv-a", "w1"));
    pvs.add(Volumes.soko("pv-b", "w1"));
    pvs.add(Volumes.pv("pv-other", "other.csi.example", "w1").build());
    nodes.add("w1");
    StorageCluster sc = cluster(NodeLossSpec.Policy.Retain);
    assertThat(run(sc).report()).isNull();

    nodes.remove("w1");
    NodeLoss.Outcome lost = run(sc);
    assertThat(lost.report().count()).isEqualTo(2);
    assertThat(lost.next()).isNull();
    assertThat(events).hasSize(1);
    assertThat(events.get(0))
        .startsWith("Warning NodeLost: Node w1 is gone; 2 PersistentVolume(s) of csi.soko.dev")
        .contains("pv-a (apps/data-pv-a), pv-b (apps/data-pv-b)")
        .contains("nothing is deleted")
        .doesNotContain("pv-other");

    clock.set(clock.get().plusSeconds(120));
    assertThat(run(sc).report()).isEqualTo(lost.report());
    assertThat(events).hasSize(1);

    nodes.add("w1");
    assertThat(run(sc).report()).isNull();
    assertThat(events).last().asString().startsWith("Normal NodeReturned: Node w1 is back");
    assertThat(writes).isEmpty();
  }

  @Test
  void deleteMarksWaitsThenDeletes() {
    pvs.add(Volumes.soko("pv-a", "w1"));
    StorageCluster sc = cluster(NodeLossSpec.Policy.Delete);
    Instant start = clock.get();
    NodeLoss.Outcome first = run(sc);
    assertThat(writes).containsExactly("mark pv-a " + start);
    assertThat(first.next()).isEqualTo(Duration.ofMinutes(10).plusSeconds(1));
    assertThat(events.get(0)).contains("will be deleted at " + start.plusSeconds(600));

    clock.set(start.plusSeconds(599));
    run(sc);
    assertThat(writes).hasSize(1);

    clock.set(start.plusSeconds(600));
    run(sc);
    assertThat(writes).last().isEqualTo("delete pv-a");
    assertThat(events)
        .last()
        .asString()
        .startsWith("Warning OrphanedVolumesDeleted: Deleted claim apps/data-pv-a and")
        .contains("of Node w1, gone for longer than 10m");
    assertThat(run(sc).report()).isNull();
  }

  @Test
  void aNodeBackBeforeTheDelayCancels() {
    pvs.add(Volumes.soko("pv-a", "w1"));
    StorageCluster sc = cluster(NodeLossSpec.Policy.Delete);
    run(sc);
    nodes.add("w1");
    clock.set(clock.get().plusSeconds(3600));
    NodeLoss.Outcome back = run(sc);
    assertThat(writes)
        .containsExactly("mark pv-a " + Instant.parse("2026-12-01T12:00:00Z"), "unmark pv-a");
    assertThat(back.report()).isNull();
    assertThat(back.next()).isNull();
    assertThat(events).last().asString().contains("pending deletion is cancelled");
  }

  @Test
  void noNodeAtAllChangesNothing() {
    nodes.clear();
    pvs.add(Volumes.soko("pv-a", "w1"));
    NodeLoss.Outcome out = run(cluster(NodeLossSpec.Policy.Delete));
    assertThat(out.report()).isNull();
    assertThat(writes).isEmpty();
    assertThat(events).isEmpty();
  }

  @Test
  void aRefusedDeletionIsReportedOnceAndRetriedSoon() {
    pvs.add(Volumes.marked("pv-a", "w1", clock.get().minusSeconds(3600).toString()));
    StorageCluster sc = cluster(NodeLossSpec.Policy.Delete);
    refuse = true;
    assertThat(run(sc).next()).isEqualTo(Plan.RETRY);
    assertThat(run(sc).next()).isEqualTo(Plan.RETRY);
    assertThat(events.stream().filter(e -> e.contains("OrphanedVolumeDeleteFailed")))
        .hasSize(1)
        .first()
        .asString()
        .contains("pv-a")
        .contains("retrying");
    refuse = false;
    run(sc);
    assertThat(pvs).isEmpty();
  }

  @Test
  void aRefusedMarkIsRetriedSoonAndNeverDeletes() {
    pvs.add(Volumes.soko("pv-a", "w1"));
    StorageCluster sc = cluster(NodeLossSpec.Policy.Delete);
    refuse = true;
    assertThat(run(sc).next()).isEqualTo(Plan.RETRY);
    clock.set(clock.get().plusSeconds(3600));
    run(sc);
    assertThat(pvs).hasSize(1);
    assertThat(writes).hasSize(2).allMatch(w -> w.startsWith("mark pv-a"));
  }

  @Test
  void theClockSurvivesARestartBecauseItIsOnThePersistentVolume() {
    Instant marked = clock.get().minusSeconds(590);
    pvs.add(Volumes.marked("pv-a", "w1", marked.toString()));
    StorageCluster sc = cluster(NodeLossSpec.Policy.Delete);
    // A new operator process: no memory, the mark says when.
    NodeLoss.Outcome out = run(sc);
    assertThat(writes).isEmpty();
    assertThat(out.next()).isEqualTo(Duration.ofSeconds(11));
    assertThat(out.report().volumes().get(0).since()).isEqualTo(marked.toString());
    clock.set(clock.get().plusSeconds(10));
    run(sc);
    assertThat(writes).containsExactly("delete pv-a");
  }
}

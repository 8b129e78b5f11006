package dev.soko.operator.nodeloss;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.NodeLossSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
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

/**
 * Snapshots of gone Nodes through the facade, with a hand-written inventory and a recording fake of
 * the content writes.
 */
class SnapshotLossTest {
  final AtomicReference<Instant> clock =
      new AtomicReference<>(Instant.parse("2026-12-01T12:00:00Z"));
  final List<String> events = new ArrayList<>();
  final List<String> writes = new ArrayList<>();
  final Set<String> nodes = new HashSet<>(Set.of("keep", "w1"));
  final List<PersistentVolume> pvs =
      new ArrayList<>(List.of(Volumes.soko("pv-a", "w1"), Volumes.soko("pv-k", "keep")));
  final List<GenericKubernetesResource> unlabelled = new ArrayList<>();
  final List<GenericKubernetesResource> labelled = new ArrayList<>();
  boolean served = true;
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

        @Override
        public boolean snapshotsServed() {
          return served;
        }

        @Override
        public List<GenericKubernetesResource> unlabelledSnapshotContents() {
          return List.copyOf(unlabelled);
        }
      };

  final SnapshotContentWrites contents =
      new SnapshotContentWrites(null) {
        @Override
        List<GenericKubernetesResource> managedBy(Set<String> lost) {
          writes.add("list " + new java.util.TreeSet<>(lost));
          return labelled.stream()
              .filter(c -> lost.contains(c.getMetadata().getLabels().get(LostSnapshots.MANAGED_BY)))
              .toList();
        }

        @Override
        void release(LostSnapshot s) {
          writes.add("release " + s.content());
          if (refuse) {
            throw new KubernetesClientException("forbidden", 403, null);
          }
          unlabelled.removeIf(c -> c.getMetadata().getName().equals(s.content()));
          labelled.removeIf(c -> c.getMetadata().getName().equals(s.content()));
        }
      };

  final VolumeMarks marks =
      new VolumeMarks(null) {
        @Override
        void mark(String pv, Instant since) {}

        @Override
        void unmark(String pv) {}

        @Override
        String delete(Orphan o, PersistentVolume cached) {
          return "PersistentVolume " + o.pv();
        }
      };

  final NodeLoss loss =
      new NodeLoss(
          marks,
          contents,
          (sc, reason, message) -> events.add("Normal " + reason + ": " + message),
          (sc, reason, message) -> events.add("Warning " + reason + ": " + message),
          (o, reason, message) ->
              events.add(
                  "Warning "
                      + o.getKind()
                      + " "
                      + o.getMetadata().getNamespace()
                      + "/"
                      + o.getMetadata().getName()
                      + " "
                      + reason
                      + ": "
                      + message),
          clock::get);

  NodeLoss.Outcome run(StorageCluster sc) {
    NodeLoss.Outcome out = loss.reconcile(sc, inventory);
    StorageClusterStatus status = new StorageClusterStatus();
    status.setOrphanedVolumes(out.report());
    sc.setStatus(status);
    return out;
  }

  List<String> snapshotEvents() {
    return events.stream().filter(e -> e.contains("VolumeSnapshot ")).toList();
  }

  @Test
  void retainWarnsEachSnapshotOnceAndReleasesNothing() {
    StorageCluster sc = NodeLossTest.cluster(NodeLossSpec.Policy.Retain);
    nodes.remove("w1");
    // Asked for after w1 went: snapshot-controller found no Node for the label.
    unlabelled.add(Contents.dynamic("c-new", Volumes.DRIVER, "vol-pv-a", null, null));
    // Taken before: labelled, with its data on w1.
    labelled.add(Contents.dynamic("c-old", Volumes.DRIVER, "vol-pv-a", "w1", "snap-1"));
    // Another node's and another driver's.
    labelled.add(Contents.dynamic("c-keep", Volumes.DRIVER, "vol-pv-k", "keep", "snap-2"));
    unlabelled.add(Contents.dynamic("c-other", "other.csi.example", "vol-pv-a", null, null));

    NodeLoss.Outcome out = run(sc);
    assertThat(out.next()).isNull();
    assertThat(snapshotEvents()).hasSize(2);
    assertThat(snapshotEvents().get(0))
        .startsWith("Warning VolumeSnapshot apps/snap-c-new SnapshotNodeLost: Node w1 is gone")
        .contains("the snapshot cannot be taken")
        .contains("no node will ever take it, even if w1 returns")
        .contains("Delete this VolumeSnapshot.")
        .contains("spec.nodeLoss Retain (StorageCluster local): nothing is released")
        .contains(LostSnapshots.CONTENT_FINALIZER);
    assertThat(snapshotEvents().get(1))
        .startsWith("Warning VolumeSnapshot apps/snap-c-old SnapshotNodeLost: Node w1 is gone")
        .contains("this snapshot's data is on it (VolumeSnapshotContent c-old)")
        .contains("or bring w1 back under its name with its pool");
    assertThat(writes).containsExactly("list [w1]");

    clock.set(clock.get().plus(Duration.ofHours(2)));
    run(sc);
    assertThat(snapshotEvents()).hasSize(2);
    assertThat(writes).containsExactly("list [w1]", "list [w1]");
  }

  @Test
  void deleteReleasesTheGoneNodesContentsWhoseSnapshotsAreDeletedAfterTheDelayAndNotBefore() {
    StorageCluster sc = NodeLossTest.cluster(NodeLossSpec.Policy.Delete);
    nodes.remove("w1");
    unlabelled.add(Contents.dynamic("c-new", Volumes.DRIVER, "vol-pv-a", null, null));
    labelled.add(Contents.dynamic("c-old", Volumes.DRIVER, "vol-pv-a", "w1", "snap-1"));
    labelled.add(Contents.dynamic("c-live", Volumes.DRIVER, "vol-pv-a", "w1", "snap-3"));
    labelled.add(
        Contents.snapshotDeleted(
            Contents.dynamic("c-keep", Volumes.DRIVER, "vol-pv-k", "keep", "snap-2")));
    unlabelled.add(
        Contents.snapshotDeleted(
            Contents.dynamic("c-other", "other.csi.example", "vol-pv-a", null, null)));

    NodeLoss.Outcome first = run(sc);
    assertThat(first.next()).isEqualTo(Duration.ofMinutes(10).plusSeconds(1));
    assertThat(snapshotEvents())
        .hasSize(3)
        .allSatisfy(
            e ->
                assertThat(e)
                    .contains(
                        "spec.nodeLoss Delete after 10m (StorageCluster local): from"
                            + " 2026-12-01T12:10:00Z on, unless w1 comes back first, the operator"
                            + " takes its content's finalizer "
                            + LostSnapshots.CONTENT_FINALIZER
                            + " off once this VolumeSnapshot is being deleted"));

    // Their VolumeSnapshots deleted before the delay: nothing yet.
    replace(unlabelled, "c-new", Contents::snapshotDeleted);
    replace(labelled, "c-old", Contents::snapshotDeleted);
    clock.set(clock.get().plus(Duration.ofMinutes(5)));
    assertThat(run(sc).next()).isEqualTo(Duration.ofMinutes(5).plusSeconds(1));
    assertThat(writes).noneMatch(w -> w.startsWith("release"));

    clock.set(clock.get().plus(Duration.ofMinutes(5)));
    NodeLoss.Outcome due = run(sc);
    assertThat(writes)
        .filteredOn(w -> w.startsWith("release"))
        .containsExactly("release c-new", "release c-old");
    assertThat(events)
        .anySatisfy(
            e ->
                assertThat(e)
                    .startsWith(
                        "Warning SnapshotContentsReleased: Released VolumeSnapshotContent(s)"
                            + " c-new, c-old of Node w1, gone for longer than 10m"));
    // c-live's VolumeSnapshot stays: it is looked at again, as no informer sees it.
    assertThat(due.next()).isEqualTo(SnapshotLoss.WATCH);
    assertThat(labelled)
        .extracting(c -> c.getMetadata().getName())
        .containsExactly("c-live", "c-keep");
    assertThat(unlabelled).extracting(c -> c.getMetadata().getName()).containsExactly("c-other");

    replace(labelled, "c-live", Contents::snapshotDeleted);
    // (The PV fake never marks, so the volumes' plan keeps its own next; not asserted here.)
    run(sc);
    assertThat(labelled).extracting(c -> c.getMetadata().getName()).containsExactly("c-keep");
  }

  static void replace(
      List<GenericKubernetesResource> list,
      String name,
      java.util.function.UnaryOperator<GenericKubernetesResource> change) {
    list.replaceAll(c -> c.getMetadata().getName().equals(name) ? change.apply(c) : c);
  }

  @Test
  void aRefusedReleaseIsReportedOnceAndRetried() {
    StorageCluster sc = NodeLossTest.cluster(NodeLossSpec.Policy.Delete);
    nodes.remove("w1");
    labelled.add(
        Contents.snapshotDeleted(
            Contents.dynamic("c-old", Volumes.DRIVER, "vol-pv-a", "w1", "snap-1")));
    run(sc);
    clock.set(clock.get().plus(Duration.ofMinutes(11)));
    refuse = true;
    assertThat(run(sc).next()).isEqualTo(Plan.RETRY);
    assertThat(run(sc).next()).isEqualTo(Plan.RETRY);
    assertThat(events)
        .filteredOn(e -> e.contains("SnapshotContentReleaseFailed"))
        .singleElement()
        .asString()
        .contains("Could not release VolumeSnapshotContent c-old of Node w1 (retrying): forbidden");
    refuse = false;
    run(sc);
    assertThat(labelled).isEmpty();
  }

  @Test
  void aNodeBackBeforeTheDelayKeepsItsContents() {
    StorageCluster sc = NodeLossTest.cluster(NodeLossSpec.Policy.Delete);
    nodes.remove("w1");
    labelled.add(
        Contents.snapshotDeleted(
            Contents.dynamic("c-old", Volumes.DRIVER, "vol-pv-a", "w1", "snap-1")));
    run(sc);
    nodes.add("w1");
    clock.set(clock.get().plus(Duration.ofMinutes(11)));
    run(sc);
    assertThat(writes).noneMatch(w -> w.startsWith("release"));
    assertThat(labelled).hasSize(1);
  }

  @Test
  void withoutTheSnapshotApiNothingIsAsked() {
    served = false;
    nodes.remove("w1");
    labelled.add(Contents.dynamic("c-old", Volumes.DRIVER, "vol-pv-a", "w1", "snap-1"));
    run(NodeLossTest.cluster(NodeLossSpec.Policy.Delete));
    assertThat(writes).isEmpty();
    assertThat(snapshotEvents()).isEmpty();
  }
}

package dev.soko.operator.nodeloss;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LostSnapshotsTest {
  static final String DRIVER = Volumes.DRIVER;
  final PersistentVolume onGone = Volumes.soko("pv-a", "gone");
  final PersistentVolume onKeep = Volumes.soko("pv-b", "keep");
  final List<PersistentVolume> pvs = List.of(onGone, onKeep);
  final List<Orphan> orphans = OrphanFinder.find(DRIVER, Set.of("keep"), pvs);

  List<LostSnapshot> find(GenericKubernetesResource... contents) {
    return LostSnapshots.find(DRIVER, Set.of("keep"), orphans, pvs, List.of(contents));
  }

  @Test
  void aContentLabelledWithAGoneNodeIsLostWhateverItsVolume() {
    List<LostSnapshot> lost =
        find(Contents.dynamic("c1", DRIVER, "vol-pv-b", "gone", "snap-00000000000000000001"));
    assertThat(lost)
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.node()).isEqualTo("gone");
              assertThat(s.labelled()).isTrue();
              assertThat(s.taken()).isTrue();
              assertThat(s.snapshot()).isEqualTo("apps/snap-c1");
              assertThat(s.snapshotUid()).isEqualTo("uid-snap-c1");
              assertThat(s.heldBySnapshotter()).isTrue();
              assertThat(s.deletionAsked()).isFalse();
            });
  }

  @Test
  void anUnlabelledContentOfAVolumeOnAGoneNodeIsLost() {
    assertThat(find(Contents.dynamic("c1", DRIVER, "vol-pv-a", null, null)))
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.node()).isEqualTo("gone");
              assertThat(s.labelled()).isFalse();
              assertThat(s.taken()).isFalse();
            });
  }

  @Test
  void contentsOfExistingNodesOtherDriversAndUnknownVolumesAreNot() {
    assertThat(
            find(
                Contents.dynamic("keep-labelled", DRIVER, "vol-pv-a", "keep", null),
                Contents.dynamic("keep-volume", DRIVER, "vol-pv-b", null, null),
                Contents.dynamic("other-driver", "other.csi.example", "vol-pv-a", "gone", null),
                Contents.dynamic("other-driver-2", "other.csi.example", "vol-pv-a", null, null),
                Contents.dynamic("no-such-volume", DRIVER, "vol-pv-z", null, null)))
        .isEmpty();
  }

  @Test
  void deletionIsAskedOnlyAsSnapshotControllerAsksACsiSnapshotter() {
    List<LostSnapshot> lost =
        find(
            Contents.snapshotDeleted(
                Contents.retained(Contents.dynamic("asked", DRIVER, "vol-pv-a", "gone", null))),
            Contents.deletedAlone(Contents.dynamic("alone", DRIVER, "vol-pv-a", "gone", null)),
            Contents.dynamic("live", DRIVER, "vol-pv-a", "gone", null));
    assertThat(lost)
        .extracting(LostSnapshot::content, LostSnapshot::deletionAsked)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("alone", false),
            org.assertj.core.groups.Tuple.tuple("asked", true),
            org.assertj.core.groups.Tuple.tuple("live", false));
  }
}

package dev.soko.operator.nodeloss;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OrphanFinderTest {
  @Test
  void aVolumeOfTheDriverOnAMissingNodeIsOrphaned() {
    List<Orphan> found =
        OrphanFinder.find(
            Volumes.DRIVER,
            Set.of("n1"),
            List.of(Volumes.soko("pv-a", "gone"), Volumes.soko("pv-b", "n1")));
    assertThat(found).extracting(Orphan::pv).containsExactly("pv-a");
    Orphan a = found.get(0);
    assertThat(a.node()).isEqualTo("gone");
    assertThat(a.claim()).isEqualTo("apps/data-pv-a");
    assertThat(a.claimUid()).isEqualTo("uid-pv-a");
    assertThat(a.markedSince()).isNull();
    assertThat(a.provisionerFinalizer()).isTrue();
    assertThat(a.keepByReclaimPolicy()).isFalse();
    assertThat(a.deleting()).isFalse();
  }

  @Test
  void otherDriversAndVolumesWithoutNodeAffinityAreLeftAlone() {
    PersistentVolume foreign = Volumes.pv("pv-f", "other.csi.example", "gone").build();
    PersistentVolume unbound =
        Volumes.pv("pv-u", Volumes.DRIVER, "gone")
            .editSpec()
            .withNodeAffinity(null)
            .endSpec()
            .build();
    PersistentVolume otherKey =
        new PersistentVolumeBuilder(Volumes.soko("pv-k", "gone"))
            .editSpec()
            .editNodeAffinity()
            .editRequired()
            .editFirstNodeSelectorTerm()
            .editFirstMatchExpression()
            .withKey("kubernetes.io/hostname")
            .endMatchExpression()
            .endNodeSelectorTerm()
            .endRequired()
            .endNodeAffinity()
            .endSpec()
            .build();
    PersistentVolume hostPath =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("hp")
            .endMetadata()
            .withNewSpec()
            .endSpec()
            .build();
    assertThat(
            OrphanFinder.find(
                Volumes.DRIVER, Set.of("n1"), List.of(foreign, unbound, otherKey, hostPath)))
        .isEmpty();
  }

  @Test
  void aVolumeAllowedOnSeveralNodesIsOrphanedOnlyWhenAllAreGone() {
    PersistentVolume two =
        new PersistentVolumeBuilder(Volumes.soko("pv-2", "a"))
            .editSpec()
            .editNodeAffinity()
            .editRequired()
            .editFirstNodeSelectorTerm()
            .editFirstMatchExpression()
            .withValues("a", "b")
            .endMatchExpression()
            .endNodeSelectorTerm()
            .endRequired()
            .endNodeAffinity()
            .endSpec()
            .build();
    assertThat(OrphanFinder.find(Volumes.DRIVER, Set.of("b"), List.of(two))).isEmpty();
    assertThat(OrphanFinder.find(Volumes.DRIVER, Set.of("c"), List.of(two))).hasSize(1);
  }

  @Test
  void markReclaimPolicyAndDeletionAreRead() {
    PersistentVolume pv =
        new PersistentVolumeBuilder(Volumes.marked("pv-m", "gone", "2026-01-02T03:04:05Z"))
            .editMetadata()
            .withDeletionTimestamp("2026-01-02T04:00:00Z")
            .withFinalizers("kubernetes.io/pv-protection")
            .endMetadata()
            .editSpec()
            .withPersistentVolumeReclaimPolicy("Retain")
            .withClaimRef(null)
            .endSpec()
            .build();
    Orphan o = OrphanFinder.find(Volumes.DRIVER, Set.of("n1"), List.of(pv)).get(0);
    assertThat(o.markedSince()).isEqualTo(Instant.parse("2026-01-02T03:04:05Z"));
    assertThat(o.keepByReclaimPolicy()).isTrue();
    assertThat(o.deleting()).isTrue();
    assertThat(o.provisionerFinalizer()).isFalse();
    assertThat(o.claim()).isNull();
  }

  @Test
  void anUnreadableMarkCountsAsUnmarked() {
    Orphan o =
        OrphanFinder.find(
                Volumes.DRIVER, Set.of("n1"), List.of(Volumes.marked("pv-x", "gone", "yesterday")))
            .get(0);
    assertThat(o.markedSince()).isNull();
  }

  @Test
  void markedVolumesWhoseNodeIsBackAreReturned() {
    List<PersistentVolume> pvs =
        List.of(
            Volumes.marked("pv-back", "n1", "2026-01-02T03:04:05Z"),
            Volumes.marked("pv-still", "gone", "2026-01-02T03:04:05Z"),
            Volumes.soko("pv-unmarked", "n1"));
    assertThat(OrphanFinder.returned(Volumes.DRIVER, Set.of("n1"), pvs)).containsExactly("pv-back");
  }
}

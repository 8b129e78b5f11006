package dev.soko.operator.nodeloss;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.OrphanedVolume;
import dev.soko.api.v1alpha1.OrphanedVolumes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlanTest {
  static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
  static final Policy DELETE_1H = new Policy(true, Duration.ofHours(1));

  static Orphan orphan(String pv, String node, Instant marked) {
    return new Orphan(pv, "apps/" + pv, "uid", node, marked, false, false, true);
  }

  @Test
  void retainReportsAndWritesNothing() {
    Instant lost = NOW.minusSeconds(600);
    Plan p =
        Plan.of(
            Policy.RETAIN,
            List.of(orphan("pv-a", "gone", null)),
            List.of(),
            Map.of("gone", lost),
            NOW);
    assertThat(p.mark()).isEmpty();
    assertThat(p.unmark()).isEmpty();
    assertThat(p.due()).isEmpty();
    assertThat(p.next()).isNull();
    OrphanedVolume v = p.report().volumes().get(0);
    assertThat(v)
        .isEqualTo(
            new OrphanedVolume("pv-a", "apps/pv-a", "gone", lost.toString(), "Retain", null));
    assertThat(p.report().count()).isEqualTo(1);
    assertThat(p.report().nodes()).containsExactly("gone");
    assertThat(p.report().more()).isNull();
  }

  @Test
  void retainRemovesMarksLeftByAnEarlierDeletePolicy() {
    Plan p =
        Plan.of(
            Policy.RETAIN,
            List.of(orphan("pv-a", "gone", NOW.minusSeconds(5))),
            List.of("pv-back"),
            Map.of(),
            NOW);
    assertThat(p.unmark()).containsExactly("pv-back", "pv-a");
  }

  @Test
  void deleteMarksFirstAndSchedulesTheDeletion() {
    Plan p = Plan.of(DELETE_1H, List.of(orphan("pv-a", "gone", null)), List.of(), Map.of(), NOW);
    assertThat(p.mark()).containsExactly("pv-a");
    assertThat(p.due()).isEmpty();
    assertThat(p.next()).isEqualTo(Duration.ofHours(1).plusSeconds(1));
    OrphanedVolume v = p.report().volumes().get(0);
    assertThat(v.action()).isEqualTo("Delete");
    assertThat(v.since()).isEqualTo(NOW.toString());
    assertThat(v.at()).isEqualTo(NOW.plus(Duration.ofHours(1)).toString());
  }

  @Test
  void deleteIsDueExactlyWhenTheDelayHasPassed() {
    Orphan early = orphan("pv-early", "gone", NOW.minusSeconds(3599));
    Orphan onTime = orphan("pv-on-time", "gone", NOW.minusSeconds(3600));
    Plan p = Plan.of(DELETE_1H, List.of(early, onTime), List.of(), Map.of(), NOW);
    assertThat(p.due()).containsExactly(onTime);
    assertThat(p.mark()).isEmpty();
    // The early one is due in one second (plus one of slack); the retry is longer.
    assertThat(p.next()).isEqualTo(Duration.ofSeconds(2));
    assertThat(p.report().volumes())
        .extracting(OrphanedVolume::pv, OrphanedVolume::action)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("pv-on-time", "Deleting"),
            org.assertj.core.groups.Tuple.tuple("pv-early", "Delete"));
  }

  @Test
  void aVolumeWhoseReclaimPolicyIsRetainIsKeptUnderDelete() {
    Orphan keep = new Orphan("pv-k", null, null, "gone", NOW.minusSeconds(7200), true, false, true);
    Plan p = Plan.of(DELETE_1H, List.of(keep), List.of(), Map.of(), NOW);
    assertThat(p.due()).isEmpty();
    assertThat(p.mark()).isEmpty();
    assertThat(p.unmark()).containsExactly("pv-k");
    assertThat(p.report().volumes().get(0).action()).isEqualTo("Retain");
  }

  @Test
  void aDeletingVolumeIsRetriedOnlyWhileTheProvisionerFinalizerIsThere() {
    Orphan stuck =
        new Orphan("pv-s", null, null, "gone", NOW.minusSeconds(7200), false, true, true);
    Orphan waiting =
        new Orphan("pv-w", null, null, "gone", NOW.minusSeconds(7200), false, true, false);
    Plan p = Plan.of(DELETE_1H, List.of(stuck, waiting), List.of(), Map.of(), NOW);
    assertThat(p.due()).containsExactly(stuck);
    assertThat(p.next()).isEqualTo(Plan.RETRY);
    assertThat(p.report().volumes()).extracting(OrphanedVolume::action).containsOnly("Deleting");
  }

  @Test
  void theReportIsBounded() {
    List<Orphan> many = new ArrayList<>();
    for (int i = 0; i < 45; i++) {
      many.add(orphan(String.format("pv-%02d", i), "node-" + (i % 30), null));
    }
    OrphanedVolumes r = Plan.of(Policy.RETAIN, many, List.of(), Map.of(), NOW).report();
    assertThat(r.count()).isEqualTo(45);
    assertThat(r.volumes()).hasSize(OrphanedVolumes.LIMIT);
    assertThat(r.more()).isEqualTo(25);
    assertThat(r.nodes()).hasSize(OrphanedVolumes.LIMIT);
  }

  @Test
  void nothingOrphanedMeansNoReport() {
    assertThat(Plan.of(DELETE_1H, List.of(), List.of(), Map.of(), NOW).report()).isNull();
  }
}

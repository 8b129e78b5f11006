package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import dev.soko.operator.reconcile.kinds.SnapshotContents;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UnclaimedSnapshotsTest {
  static final Instant NOW = Instant.parse("2025-06-01T12:00:00Z");
  static final String HANDLE = "snap-abcdefghij0123456789";

  final StorageCluster sc = Fixtures.sample();
  final String driver = sc.getSpec().getDriver().getName();
  final List<String> warnings = new ArrayList<>();
  final UnclaimedSnapshots unclaimed =
      new UnclaimedSnapshots(
          (content, reason, message) ->
              warnings.add(content.getMetadata().getName() + " " + reason + ": " + message));

  @Test
  void anImportNoNodeTookWithinTheGraceIsReportedOnceAndAYoungOneIsLookedAtWhenDue() {
    FakeClusterCache cache =
        new FakeClusterCache()
            .with(content("old", "uid-old", driver, HANDLE, null, NOW.minusSeconds(121)))
            .with(content("young", "uid-young", driver, HANDLE, null, NOW.minusSeconds(30)));

    Duration next = unclaimed.check(sc, cache, NOW);

    assertThat(warnings)
        .containsExactly(
            "old SnapshotNotOnAnyNode: no node of StorageCluster fast holds snapshot "
                + HANDLE
                + ": none labelled this content snapshot.storage.kubernetes.io/managed-by within"
                + " 2 min, so no csi-snapshotter serves it and it never becomes ready. The node"
                + " that holds it may be down (its driver labels the content when it starts) or"
                + " gone, or the snapshot was deleted; see docs/snapshots.md");
    assertThat(next).as("the young one's grace ends then").isEqualTo(Duration.ofSeconds(90));

    assertThat(unclaimed.check(sc, cache, NOW.plusSeconds(5))).isEqualTo(Duration.ofSeconds(85));
    assertThat(warnings).as("no second Warning for the same content").hasSize(1);
    assertThat(unclaimed.check(sc, cache, NOW.plusSeconds(90))).isNull();
    assertThat(warnings).hasSize(2).last().asString().startsWith("young SnapshotNotOnAnyNode");
  }

  @Test
  void onlyUnlabelledImportsOfThisDriverCount() {
    Instant old = NOW.minus(Duration.ofHours(1));
    FakeClusterCache cache =
        new FakeClusterCache()
            .with(content("labelled", "u1", driver, HANDLE, "node-a", old))
            .with(content("labelled-empty", "u2", driver, HANDLE, "", old))
            .with(content("other-driver", "u3", "other.csi.example", HANDLE, null, old))
            .with(content("dynamic", "u4", driver, null, null, old));

    assertThat(unclaimed.check(sc, cache, NOW)).isNull();
    assertThat(warnings).isEmpty();
  }

  @Test
  void aHandleThatIsNoSokoSnapshotIdIsNamedAsSuch() {
    FakeClusterCache cache =
        new FakeClusterCache()
            .with(content("typo", "u1", driver, "snap-TOO-SHORT", null, NOW.minusSeconds(600)));

    unclaimed.check(sc, cache, NOW);

    assertThat(warnings)
        .singleElement()
        .asString()
        .contains("snapshot handle snap-TOO-SHORT is not a snapshot ID of fast.csi.soko.dev")
        .contains("never becomes ready");
  }

  @Test
  void aContentThatComesBackAfterLeavingTheCacheIsReportedAgain() {
    GenericKubernetesResource stuck =
        content("stuck", "u1", driver, HANDLE, null, NOW.minusSeconds(600));
    FakeClusterCache cache = new FakeClusterCache().with(stuck);
    unclaimed.check(sc, cache, NOW);
    cache.objects.clear(); // labelled by hand, say: it leaves the selector
    unclaimed.check(sc, cache, NOW);
    cache.objects.add(stuck); // the label removed again

    unclaimed.check(sc, cache, NOW);

    assertThat(warnings).hasSize(2);
  }

  static GenericKubernetesResource content(
      String name, String uid, String driver, String handle, String managedBy, Instant created) {
    GenericKubernetesResource content = new GenericKubernetesResource();
    content.setApiVersion("snapshot.storage.k8s.io/v1");
    content.setKind("VolumeSnapshotContent");
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    meta.setUid(uid);
    meta.setCreationTimestamp(created.toString());
    if (managedBy != null) {
      meta.setLabels(Map.of(SnapshotContents.MANAGED_BY, managedBy));
    }
    content.setMetadata(meta);
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("driver", driver);
    spec.put("deletionPolicy", "Delete");
    spec.put(
        "source",
        handle == null
            ? Map.of("volumeHandle", "vol-aaaaaaaaaaaaaaaaaaaa")
            : Map.of("snapshotHandle", handle));
    content.setAdditionalProperty("spec", spec);
    return content;
  }
}

package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PrunerTest {
  private static final ClusterFacts FACTS =
      ClusterFacts.offline(KubernetesVersion.parse("v1.36.3"));

  private final StorageCluster cluster = storageCluster("soko");

  @Test
  void aClassRemovedFromTheSpecIsPruned() {
    FakeClusterCache cache = new FakeClusterCache().with(applied("soko")).with(applied("old"));

    assertThat(names(Pruner.stale(cluster, List.of(desired("soko")), FACTS, cache)))
        .containsExactly("old");
  }

  @Test
  void aCopyOfAnOwnedClassUnderAnotherNameIsNotSokosToPrune() {
    // What `kubectl get sc soko -o yaml`, a rename and `kubectl apply` make, and what Kubernetes'
    // storage suite makes of a driver definition's FromExistingClassName: labels, annotations and
    // owner references all copied.
    StorageClass copy = applied("soko");
    copy.getMetadata().setName("provisioning-730-e2e-sc2llw4");
    FakeClusterCache cache = new FakeClusterCache().with(applied("soko")).with(copy);

    assertThat(Pruner.stale(cluster, List.of(desired("soko")), FACTS, cache)).isEmpty();
  }

  @Test
  void aClassAnEarlierOperatorAppliedWithoutTheNameAnnotationIsStillPruned() {
    StorageClass earlier = applied("old");
    earlier.getMetadata().getAnnotations().remove(Applier.NAME_ANNOTATION);
    FakeClusterCache cache = new FakeClusterCache().with(applied("soko")).with(earlier);

    assertThat(names(Pruner.stale(cluster, List.of(desired("soko")), FACTS, cache)))
        .containsExactly("old");
  }

  /**
   * The VolumeGroupSnapshotClass goes as the VolumeSnapshotClass does when snapshots are turned off
   * (its API still served); where the group API is not served it is not looked for.
   */
  @Test
  void theGroupSnapshotClassIsPrunedWithSnapshotsOffAndNotLookedForWithoutItsApi() {
    StorageCluster fast = storageCluster("fast");
    VersionsTable table = VersionsTable.load();
    StorageCluster sc = Fixtures.sample();
    HasMetadata group =
        Applier.withHashAndOwner(DesiredState.of(sc, table, FACTS).groupSnapshotClass(), fast);
    FakeClusterCache cache = new FakeClusterCache().with(group);

    assertThat(Pruner.stale(fast, DesiredState.of(sc, table, FACTS).all(), FACTS, cache))
        .as("still desired")
        .isEmpty();
    sc.getSpec().getSnapshots().setEnabled(false);
    assertThat(names(Pruner.stale(fast, DesiredState.of(sc, table, FACTS).all(), FACTS, cache)))
        .containsExactly("fast-snapshots");

    ClusterFacts noGroupApi =
        Fixtures.serving("v1.36.3", Set.of(ClusterFacts.VOLUME_SNAPSHOT_CLASSES));
    assertThat(
            Pruner.stale(
                fast,
                DesiredState.of(Fixtures.sample(), table, noGroupApi).all(),
                noGroupApi,
                cache))
        .isEmpty();
  }

  @Test
  void appliedObjectsCarryTheirOwnName() {
    HasMetadata applied = Applier.withHashAndOwner(desired("soko"), cluster);

    assertThat(applied.getMetadata().getAnnotations())
        .containsEntry(Applier.NAME_ANNOTATION, "soko");
  }

  private StorageClass desired(String name) {
    return new StorageClassBuilder()
        .withMetadata(
            new ObjectMetaBuilder()
                .withName(name)
                .withLabels(Map.of(Names.LABEL_CLUSTER, "soko"))
                .build())
        .withProvisioner("csi.soko.dev")
        .build();
  }

  /** The object as the API server holds it after the operator applied it. */
  private StorageClass applied(String name) {
    StorageClass applied = (StorageClass) Applier.withHashAndOwner(desired(name), cluster);
    applied.getMetadata().setAnnotations(new HashMap<>(applied.getMetadata().getAnnotations()));
    return applied;
  }

  private static List<String> names(List<Pruner.Owned> owned) {
    return owned.stream().map(o -> o.object().getMetadata().getName()).toList();
  }

  private static StorageCluster storageCluster(String name) {
    StorageCluster sc = new StorageCluster();
    sc.setMetadata(new ObjectMetaBuilder().withName(name).withUid("uid-" + name).build());
    return sc;
  }

  @Test
  void pruningKeysKeepTwoGenericKindsOfTheSameNameApart() {
    GenericKubernetesResource snapshotClass =
        generic("snapshot.storage.k8s.io/v1", "VolumeSnapshotClass");
    GenericKubernetesResource other =
        generic("groupsnapshot.storage.k8s.io/v1", "VolumeGroupSnapshotClass");
    assertThat(Pruner.Key.of(KindRegistry.VOLUME_SNAPSHOT_CLASS, snapshotClass))
        .isNotEqualTo(Pruner.Key.of(KindRegistry.VOLUME_GROUP_SNAPSHOT_CLASS, other));
    assertThat(KindRegistry.of(snapshotClass)).isEqualTo(KindRegistry.VOLUME_SNAPSHOT_CLASS);
    assertThat(KindRegistry.of(other)).isEqualTo(KindRegistry.VOLUME_GROUP_SNAPSHOT_CLASS);
  }

  private static GenericKubernetesResource generic(String apiVersion, String kind) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion(apiVersion)
        .withKind(kind)
        .withNewMetadata()
        .withName("same")
        .addToLabels("soko.dev/storagecluster", "a")
        .endMetadata()
        .build();
  }
}

package dev.soko.operator.reconcile.kinds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.ServingCertificates;
import dev.soko.operator.model.SnapshotMetadata;
import dev.soko.operator.model.VersionsTable;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KindRegistryTest {
  private static List<PolicyRule> operatorRules() throws Exception {
    try (InputStream in = KindRegistryTest.class.getResourceAsStream("/rbac/operator-rbac.yaml")) {
      List<HasMetadata> objects = Serialization.unmarshal(in);
      return objects.stream()
          .filter(ClusterRole.class::isInstance)
          .map(ClusterRole.class::cast)
          .filter(r -> r.getMetadata().getName().equals("soko-operator"))
          .findFirst()
          .orElseThrow()
          .getRules();
    }
  }

  private static Set<String> granted(List<PolicyRule> rules, String group, String resource) {
    Set<String> verbs = new HashSet<>();
    for (PolicyRule r : rules) {
      if (r.getApiGroups().contains(group) && r.getResources().contains(resource)) {
        verbs.addAll(r.getVerbs());
      }
    }
    return verbs;
  }

  @Test
  void theOperatorsClusterRoleGrantsEveryKindTheVerbsTheOperatorUses() throws Exception {
    List<PolicyRule> rules = operatorRules();
    for (Kind kind : KindRegistry.ALL) {
      assertThat(granted(rules, kind.group(), kind.plural()))
          .as(kind.kind() + " (" + kind.group() + "/" + kind.plural() + ")")
          .containsAll(kind.verbs());
    }
    // Status and finalizers of the primary, which JOSDK patches.
    assertThat(granted(rules, "soko.dev", "storageclusters/status")).contains("patch");
    assertThat(granted(rules, "soko.dev", "storageclusters/finalizers")).contains("update");
  }

  @Test
  void anInformerWatchesEveryKindItLists() {
    for (Kind kind : KindRegistry.informers()) {
      assertThat(kind.verbs()).as(kind.kind()).contains("list", "watch");
    }
    assertThat(KindRegistry.ownedKinds()).allMatch(Kind::informer);
  }

  @Test
  void nodesAndVolumesAreWatchedOnceForNodeLossAndUninstallAndCachedSlim() {
    assertThat(KindRegistry.informers())
        .contains(KindRegistry.NODE, KindRegistry.PERSISTENT_VOLUME)
        .doesNotHaveDuplicates();
    assertThat(KindRegistry.informers().stream().map(Kind::sourceName)).doesNotHaveDuplicates();
    var pv =
        new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("pv-1")
            .addToLabels("big", "label")
            .endMetadata()
            .withNewSpec()
            .withNewCsi()
            .withDriver("a.csi.soko.dev")
            .withVolumeHandle("vol-1")
            .endCsi()
            .addToCapacity("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi"))
            .endSpec()
            .build();
    Kind.Watch watch = KindRegistry.PERSISTENT_VOLUME.watch();
    HasMetadata kept = watch.slim().apply(pv);
    assertThat(kept.getMetadata().getLabels()).isNullOrEmpty();
    assertThat(watch.index().apply(kept)).isEqualTo("a.csi.soko.dev");
    assertThat(watch.reconciles()).isEqualTo(Kind.Reconciles.ADD_OR_DELETE);
    assertThat(KindRegistry.NODE.watch().reconciles()).isEqualTo(Kind.Reconciles.ADD_OR_DELETE);
  }

  @Test
  void everyObjectTheModelRendersIsAnOwnedKindAndAppliesInRankOrder() {
    var sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setEnabled(true);
    DesiredState desired =
        DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")));
    Set<String> kinds = new HashSet<>();
    for (HasMetadata o : desired.all()) {
      Kind kind = KindRegistry.of(o);
      assertThat(kind.use()).isEqualTo(Kind.Use.OWNED);
      assertThat(kind.namespaced())
          .as(o.getKind())
          .isEqualTo(o.getMetadata().getNamespace() != null);
      kinds.add(kind.kind());
    }
    assertThat(kinds)
        .contains("VolumeSnapshotClass", "VolumeGroupSnapshotClass", "DaemonSet", "Namespace");
    List<HasMetadata> ordered = KindRegistry.inApplyOrder(desired.all());
    assertThat(ordered.get(0).getKind()).isEqualTo("Namespace");
    assertThat(ordered).extracting(o -> KindRegistry.of(o).applyRank()).isSorted();
    // Uninstall: workloads first, the namespace last.
    assertThat(KindRegistry.deleteOrder().get(0)).isEqualTo(KindRegistry.DAEMON_SET);
    assertThat(KindRegistry.deleteOrder().get(KindRegistry.deleteOrder().size() - 1))
        .isEqualTo(KindRegistry.NAMESPACE);
  }

  /**
   * What changed block tracking adds where it runs (by default, with a CA) is owned and applied in
   * order too: the Secret before the Deployment that mounts it.
   */
  @Test
  void everyObjectOfChangedBlockTrackingIsAnOwnedKind() {
    var sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setEnabled(true);
    DesiredState desired =
        DesiredState.of(
            sc,
            VersionsTable.load(),
            ClusterFacts.offline(KubernetesVersion.parse("1.34")),
            (cn, names) ->
                Optional.of(new ServingCertificates.ServingCertificate("crt", "key", "ca")));
    Set<String> kinds = new HashSet<>();
    for (HasMetadata o : desired.snapshotMetadata()) {
      Kind kind = KindRegistry.of(o);
      assertThat(kind.use()).isEqualTo(Kind.Use.OWNED);
      assertThat(kind.namespaced())
          .as(o.getKind())
          .isEqualTo(o.getMetadata().getNamespace() != null);
      kinds.add(kind.kind());
    }
    assertThat(kinds)
        .containsExactlyInAnyOrder(
            "Secret", "Service", "SnapshotMetadataService", "ClusterRole", "ClusterRoleBinding");
    List<HasMetadata> ordered = KindRegistry.inApplyOrder(desired.all());
    assertThat(ordered.indexOf(desired.snapshotMetadata().get(0)))
        .as("the Secret before the Deployment")
        .isLessThan(ordered.indexOf(desired.controllerDeployment()));
    assertThat(KindRegistry.SECRET.bundle()).as("a Secret holds a key: never bundled").isNull();
  }

  @Test
  void theOptionalSnapshotApisAreGatesCheckedThroughDiscovery() {
    assertThat(KindRegistry.gates())
        .containsExactly(
            ClusterFacts.VOLUME_SNAPSHOT_CLASSES,
            ClusterFacts.VOLUME_GROUP_SNAPSHOT_CLASSES,
            SnapshotMetadata.API,
            KindRegistry.STORAGE_NODES);
    var none = Fixtures.serving("1.34", Set.of());
    assertThat(KindRegistry.SNAPSHOT_METADATA_SERVICE.served(none)).isFalse();
    assertThat(KindRegistry.VOLUME_SNAPSHOT_CLASS.served(none)).isFalse();
    assertThat(KindRegistry.VOLUME_GROUP_SNAPSHOT_CLASS.served(none)).isFalse();
    assertThat(KindRegistry.DAEMON_SET.served(none)).isTrue();
    var snapshotsOnly = Fixtures.serving("1.34", Set.of(ClusterFacts.VOLUME_SNAPSHOT_CLASSES));
    assertThat(KindRegistry.VOLUME_SNAPSHOT_CLASS.served(snapshotsOnly)).isTrue();
    assertThat(KindRegistry.VOLUME_GROUP_SNAPSHOT_CLASS.served(snapshotsOnly))
        .as("the group CRDs are installed apart from the snapshot ones")
        .isFalse();
  }

  /**
   * The group snapshot class is owned like the VolumeSnapshotClass: applied with the classes,
   * deleted on uninstall before the RBAC and the namespace, cached by an informer that watches it
   * whole (someone else's default group class changes whether Soko's may be the default).
   */
  @Test
  void theGroupSnapshotClassIsOwnedAndWatchedAsTheSnapshotClassIs() {
    Kind group = KindRegistry.VOLUME_GROUP_SNAPSHOT_CLASS;
    Kind single = KindRegistry.VOLUME_SNAPSHOT_CLASS;
    assertThat(group.apiVersion()).isEqualTo("groupsnapshot.storage.k8s.io/v1");
    assertThat(group.kind()).isEqualTo("VolumeGroupSnapshotClass");
    assertThat(group.plural()).isEqualTo("volumegroupsnapshotclasses");
    assertThat(KindRegistry.ownedKinds()).contains(group);
    assertThat(KindRegistry.informers()).contains(group);
    assertThat(KindRegistry.deleteOrder()).contains(group);
    assertThat(group.generic()).isTrue();
    assertThat(group.namespaced()).isFalse();
    assertThat(List.of(group.applyRank(), group.deleteRank(), group.verbs(), group.watch()))
        .isEqualTo(
            List.of(single.applyRank(), single.deleteRank(), single.verbs(), single.watch()));
    assertThat(group.watch().mapping()).isEqualTo(Kind.Mapping.BY_LABEL_OR_FOREIGN);
    assertThat(group.watch().labelSelector()).isNull();
    assertThat(KindRegistry.deleteOrder().indexOf(group))
        .isLessThan(KindRegistry.deleteOrder().indexOf(KindRegistry.CLUSTER_ROLE));
  }

  /**
   * Kubernetes lets no one grant what it does not hold, and the operator has no 'escalate' or
   * 'bind': every rule it grants a component, on every row and with every optional part on (the
   * offline render counts every API as served, the group snapshot API too), is one it holds.
   */
  @Test
  void theOperatorHoldsEveryRuleItGrants() throws Exception {
    List<PolicyRule> rules = operatorRules();
    int groupRules = 0;
    for (VersionsTable.Row row : VersionsTable.load().rows()) {
      var sc = Fixtures.sample();
      sc.getSpec().getSnapshots().setEnabled(true);
      sc.getSpec().getFeatures().setCapacityTracking(true);
      DesiredState d =
          DesiredState.of(
              sc,
              VersionsTable.load(),
              ClusterFacts.offline(KubernetesVersion.parse("1." + row.minMinor())));
      List<HasMetadata> rbac = new ArrayList<>(d.rbac());
      rbac.addAll(d.snapshotMetadata());
      for (HasMetadata o : rbac) {
        List<PolicyRule> granted =
            o instanceof ClusterRole cr
                ? cr.getRules()
                : o instanceof Role r ? r.getRules() : List.of();
        for (PolicyRule rule : granted) {
          for (String group : rule.getApiGroups()) {
            if (group.equals("groupsnapshot.storage.k8s.io")) {
              groupRules++;
            }
            for (String resource : rule.getResources()) {
              assertThat(granted(rules, group, resource))
                  .as(
                      "%s grants %s/%s on 1.%d",
                      o.getMetadata().getName(), group, resource, row.minMinor())
                  .containsAll(rule.getVerbs());
            }
          }
        }
      }
    }
    assertThat(groupRules).as("the group snapshotter's rules were among them").isPositive();
  }

  /**
   * The support bundle's kinds are the registry's: every owned kind but the Namespace (the bundle
   * is organised by namespace) and the Secret (it holds a private key), and kinds only the bundle
   * reads, which the operator neither uses nor is granted.
   */
  @Test
  void theSupportBundleCollectsTheRegistrysKinds() {
    assertThat(KindRegistry.ownedKinds().stream().filter(k -> k.bundle() == null))
        .containsExactly(KindRegistry.NAMESPACE, KindRegistry.SECRET);
    assertThat(KindRegistry.bundled()).extracting(Kind::kind).doesNotContain("Secret");
    assertThat(KindRegistry.ALL.stream().filter(k -> k.use() == Kind.Use.COLLECTED))
        .extracting(Kind::kind)
        .containsExactlyInAnyOrder(
            "VolumeGroupSnapshotContent", "NodeRequest", "ConfigMap", "Lease");
    for (Kind kind : KindRegistry.ALL) {
      if (kind.use() == Kind.Use.COLLECTED) {
        assertThat(kind.verbs()).as(kind.kind()).isEmpty();
        assertThat(kind.informer()).as(kind.kind()).isFalse();
      }
    }
    assertThat(KindRegistry.bundled())
        .filteredOn(k -> k.bundle().scope() == Kind.Bundle.Scope.OF_DRIVERS)
        .extracting(Kind::kind)
        .containsExactlyInAnyOrder(
            "CSIDriver",
            "StorageClass",
            "VolumeSnapshotClass",
            "VolumeGroupSnapshotClass",
            "PersistentVolume",
            "VolumeSnapshotContent",
            "VolumeGroupSnapshotContent",
            "SnapshotMetadataService");
    assertThat(KindRegistry.bundled())
        .filteredOn(k -> k.bundle().scope() == Kind.Bundle.Scope.OF_DRIVERS)
        .allMatch(k -> k.bundle().driver() != null);
  }
}

package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.api.v1alpha1.NodeLossSpec;
import dev.soko.api.v1alpha1.OrphanedVolume;
import dev.soko.api.v1alpha1.OrphanedVolumes;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * spec.nodeLoss against a real kube-apiserver, with the operator under its own RBAC. There is no
 * kubelet and no controller-manager: Nodes, claims and volumes are written as they would be, and
 * the test plays the controller-manager's protection controllers where a deletion waits on them.
 */
class NodeLossIT {
  static final String PROVISIONER_FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer";
  static final String MARK = "soko.dev/node-missing-since";
  static TestCluster cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
    admin = cluster.admin;
  }

  @Test
  void retainReportsTheOrphansAndChangesNothingAndANodeBackClearsTheReport() {
    String name = "nlret";
    create(Specs.cluster(name));
    node(name + "-keep");
    node(name + "-w1");
    PersistentVolume a = claimedVolume(name, "a", name + ".csi.soko.dev", name + "-w1");
    PersistentVolume b = volume(name + "-b", name + ".csi.soko.dev", name + "-w1").build();
    b = admin.persistentVolumes().resource(b).create();
    PersistentVolume foreign = foreignVolume(name);

    admin.nodes().withName(name + "-w1").delete();
    OrphanedVolumes report = awaitReport(name, r -> r != null && r.count() == 2);
    assertThat(report.nodes()).containsExactly(name + "-w1");
    assertThat(report.more()).isNull();
    assertThat(report.volumes())
        .extracting(OrphanedVolume::pv, OrphanedVolume::pvc, OrphanedVolume::action)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(
                a.getMetadata().getName(), name + "-apps/data-a", "Retain"),
            org.assertj.core.groups.Tuple.tuple(b.getMetadata().getName(), null, "Retain"));
    assertThat(report.volumes()).allMatch(v -> v.at() == null && v.since() != null);
    Event lost = awaitEvent(name, "NodeLost");
    assertThat(lost.getType()).isEqualTo("Warning");
    assertThat(lost.getMessage())
        .contains("Node " + name + "-w1 is gone")
        .contains(a.getMetadata().getName() + " (" + name + "-apps/data-a)")
        .contains(b.getMetadata().getName())
        .contains("nothing is deleted")
        .doesNotContain(foreign.getMetadata().getName());

    node(name + "-w1");
    awaitReport(name, r -> r == null);
    assertThat(awaitEvent(name, "NodeReturned").getMessage()).contains(name + "-w1 is back");
    // Nothing was written to the volumes, the claim or the other driver's volume.
    for (PersistentVolume pv : List.of(a, b, foreign)) {
      assertThat(admin.persistentVolumes().withName(pv.getMetadata().getName()).get())
          .extracting(p -> p.getMetadata().getResourceVersion())
          .isEqualTo(pv.getMetadata().getResourceVersion());
    }
    assertThat(claim(name, "a").getMetadata().getDeletionTimestamp()).isNull();
  }

  /**
   * A volume can reach the operator's cache after the loss of its Node has been reconciled: one
   * created as its Node went, or by a restore from a backup. Its arrival must reconcile too, not
   * wait for the next resync.
   */
  @Test
  void aVolumeThatArrivesAfterItsNodeIsGoneIsReported() {
    String name = "nllate";
    String driver = name + ".csi.soko.dev";
    create(Specs.cluster(name));
    node(name + "-keep");
    node(name + "-w1");
    PersistentVolume first =
        admin
            .persistentVolumes()
            .resource(volume(name + "-first", driver, name + "-w1").build())
            .create();
    admin.nodes().withName(name + "-w1").delete();
    awaitReport(name, r -> r != null && r.count() == 1);
    PersistentVolume late =
        admin
            .persistentVolumes()
            .resource(volume(name + "-late", driver, name + "-w1").build())
            .create();
    OrphanedVolumes report = awaitReport(name, r -> r != null && r.count() == 2);
    assertThat(report.volumes())
        .extracting(OrphanedVolume::pv)
        .containsExactly(first.getMetadata().getName(), late.getMetadata().getName());
  }

  @Test
  void deleteRemovesClaimAndVolumeAfterTheDelayAndNotBefore() {
    String name = "nldel";
    StorageCluster spec = Specs.cluster(name);
    spec.getSpec().getNodeLoss().setPolicy(NodeLossSpec.Policy.Delete);
    spec.getSpec().getNodeLoss().setDeleteAfter("30s");
    create(spec);
    node(name + "-keep");
    node(name + "-w1");
    PersistentVolume a = claimedVolume(name, "a", name + ".csi.soko.dev", name + "-w1");
    String pv = a.getMetadata().getName();
    PersistentVolume foreign = foreignVolume(name);

    admin.nodes().withName(name + "-w1").delete();
    OrphanedVolume pending = awaitReport(name, r -> r != null && r.count() == 1).volumes().get(0);
    assertThat(pending.action()).isEqualTo("Delete");
    Instant since = Instant.parse(pending.since());
    Instant at = Instant.parse(pending.at());
    assertThat(Duration.between(since, at)).isEqualTo(Duration.ofSeconds(30));
    assertThat(admin.persistentVolumes().withName(pv).get().getMetadata().getAnnotations())
        .containsEntry(MARK, pending.since());
    assertThat(awaitEvent(name, "NodeLost").getMessage())
        .contains("will be deleted at " + pending.at());
    // Not before the delay.
    assertThat(Instant.now()).isBefore(at);
    assertThat(claim(name, "a").getMetadata().getDeletionTimestamp()).isNull();
    assertThat(admin.persistentVolumes().withName(pv).get().getMetadata().getDeletionTimestamp())
        .isNull();

    PersistentVolumeClaim deleting =
        Await.until(
            "claim deleted",
            Duration.ofSeconds(90),
            () -> claim(name, "a"),
            c -> c == null || c.getMetadata().getDeletionTimestamp() != null);
    assertThat(Instant.now()).isAfterOrEqualTo(at);
    assertThat(deleting).isNotNull();
    PersistentVolume pvDeleting =
        Await.until(
            "volume deleted and the provisioner's finalizer removed",
            () -> admin.persistentVolumes().withName(pv).get(),
            p ->
                p.getMetadata().getDeletionTimestamp() != null
                    && !p.getMetadata().getFinalizers().contains(PROVISIONER_FINALIZER));
    assertThat(pvDeleting.getMetadata().getFinalizers())
        .containsExactly("kubernetes.io/pv-protection");
    assertThat(awaitEvent(name, "OrphanedVolumesDeleted").getMessage())
        .contains("claim " + name + "-apps/data-a and PersistentVolume " + pv)
        .contains("gone for longer than 30s");

    // The controller-manager's protection controllers: the claim has no pod, the volume no claim.
    dropFinalizers(claim(name, "a"));
    Await.until("claim gone", () -> claim(name, "a") == null, gone -> gone);
    dropFinalizers(admin.persistentVolumes().withName(pv).get());
    Await.until(
        "volume gone", () -> admin.persistentVolumes().withName(pv).get() == null, gone -> gone);
    awaitReport(name, r -> r == null);
    PersistentVolume other =
        admin.persistentVolumes().withName(foreign.getMetadata().getName()).get();
    assertThat(other.getMetadata().getResourceVersion())
        .isEqualTo(foreign.getMetadata().getResourceVersion());
  }

  @Test
  void aNodeBackBeforeTheDelayCancelsTheDeletion() {
    String name = "nlback";
    StorageCluster spec = Specs.cluster(name);
    spec.getSpec().getNodeLoss().setPolicy(NodeLossSpec.Policy.Delete);
    spec.getSpec().getNodeLoss().setDeleteAfter("1h");
    create(spec);
    node(name + "-keep");
    node(name + "-w1");
    String pv =
        claimedVolume(name, "a", name + ".csi.soko.dev", name + "-w1").getMetadata().getName();

    admin.nodes().withName(name + "-w1").delete();
    awaitReport(name, r -> r != null && "Delete".equals(r.volumes().get(0).action()));
    Await.until(
        "volume marked",
        () -> admin.persistentVolumes().withName(pv).get().getMetadata().getAnnotations(),
        a -> a != null && a.containsKey(MARK));

    node(name + "-w1");
    awaitReport(name, r -> r == null);
    Await.until(
        "mark removed",
        () -> admin.persistentVolumes().withName(pv).get().getMetadata().getAnnotations(),
        a -> a == null || !a.containsKey(MARK));
    assertThat(awaitEvent(name, "NodeReturned").getMessage())
        .contains("pending deletion is cancelled");
    assertThat(claim(name, "a").getMetadata().getDeletionTimestamp()).isNull();
    PersistentVolume kept = admin.persistentVolumes().withName(pv).get();
    assertThat(kept.getMetadata().getDeletionTimestamp()).isNull();
    assertThat(kept.getMetadata().getFinalizers()).contains(PROVISIONER_FINALIZER);
  }

  @Test
  void deleteAfterIsValidatedWithAMessageNamingTheField() {
    for (String[] c :
        new String[][] {
          {"1d", "spec.nodeLoss.deleteAfter must be a duration such as 30m, 1h or 1h30m"},
          {"10s", "spec.nodeLoss.deleteAfter must be between 30s and 8760h"},
          {"9000h", "spec.nodeLoss.deleteAfter must be between 30s and 8760h"}
        }) {
      GenericKubernetesResource sc =
          Serialization.unmarshal(
              "apiVersion: soko.dev/v1alpha1\nkind: StorageCluster\nmetadata: {name: nlinvalid}\n"
                  + "spec:\n  pools: [{name: main, path: /p}]\n"
                  + "  nodeLoss: {policy: Delete, deleteAfter: '"
                  + c[0]
                  + "'}\n",
              GenericKubernetesResource.class);
      assertThatThrownBy(() -> admin.resource(sc).create())
          .as(c[0])
          .isInstanceOf(KubernetesClientException.class)
          .hasMessageContaining(c[1]);
    }
  }

  // --- fixtures ------------------------------------------------------------------------------

  static void create(StorageCluster sc) {
    admin.resource(sc).create();
    String name = sc.getMetadata().getName();
    Await.until(
        name + " applied",
        () -> cluster.get(name),
        s -> s.getStatus() != null && s.getStatus().getAppliedObjects() != null);
  }

  static void node(String name) {
    admin
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  static PersistentVolumeBuilder volume(String name, String driver, String node) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .addToFinalizers(PROVISIONER_FINALIZER)
        .endMetadata()
        .withNewSpec()
        .withCapacity(Map.of("storage", new Quantity("1Gi")))
        .withAccessModes("ReadWriteOnce")
        .withPersistentVolumeReclaimPolicy("Delete")
        .withNewCsi()
        .withDriver(driver)
        .withVolumeHandle("vol-" + name)
        .endCsi()
        .withNewNodeAffinity()
        .withNewRequired()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey("topology.soko.dev/node")
        .withOperator("In")
        .withValues(node)
        .endMatchExpression()
        .endNodeSelectorTerm()
        .endRequired()
        .endNodeAffinity()
        .endSpec();
  }

  /** A claim in namespace {name}-apps and the PV bound to it, as the provisioner leaves them. */
  static PersistentVolume claimedVolume(String name, String suffix, String driver, String node) {
    String ns = name + "-apps";
    if (admin.namespaces().withName(ns).get() == null) {
      admin
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    String pv = "pv-" + name + "-" + suffix;
    PersistentVolumeClaim pvc =
        admin
            .persistentVolumeClaims()
            .inNamespace(ns)
            .resource(
                new PersistentVolumeClaimBuilder()
                    .withNewMetadata()
                    .withName("data-" + suffix)
                    .withNamespace(ns)
                    .endMetadata()
                    .withNewSpec()
                    .withAccessModes("ReadWriteOnce")
                    .withStorageClassName(name + "-sc")
                    .withVolumeName(pv)
                    .withNewResources()
                    .addToRequests("storage", new Quantity("1Gi"))
                    .endResources()
                    .endSpec()
                    .build())
            .create();
    return admin
        .persistentVolumes()
        .resource(
            volume(pv, driver, node)
                .editSpec()
                .withStorageClassName(name + "-sc")
                .withNewClaimRef()
                .withKind("PersistentVolumeClaim")
                .withNamespace(ns)
                .withName("data-" + suffix)
                .withUid(pvc.getMetadata().getUid())
                .endClaimRef()
                .endSpec()
                .build())
        .create();
  }

  /** A PV of another CSI driver on the same node, with the same topology key. */
  static PersistentVolume foreignVolume(String name) {
    return admin
        .persistentVolumes()
        .resource(volume("pv-" + name + "-foreign", "other.csi.example", name + "-w1").build())
        .create();
  }

  static PersistentVolumeClaim claim(String name, String suffix) {
    return admin
        .persistentVolumeClaims()
        .inNamespace(name + "-apps")
        .withName("data-" + suffix)
        .get();
  }

  static <T extends io.fabric8.kubernetes.api.model.HasMetadata> void dropFinalizers(T object) {
    object.getMetadata().setFinalizers(List.of());
    admin.resource(object).update();
  }

  static OrphanedVolumes awaitReport(
      String name, java.util.function.Predicate<OrphanedVolumes> done) {
    return Await.until(
            name + " orphaned volumes",
            Duration.ofSeconds(60),
            () -> cluster.get(name).getStatus(),
            s -> s != null && done.test(s.getOrphanedVolumes()))
        .getOrphanedVolumes();
  }

  static Event awaitEvent(String name, String reason) {
    return Await.until(
            name + " event " + reason,
            () ->
                admin.v1().events().inNamespace("default").list().getItems().stream()
                    .filter(e -> name.equals(e.getInvolvedObject().getName()))
                    .filter(e -> reason.equals(e.getReason()))
                    .toList(),
            l -> !l.isEmpty())
        .get(0);
  }
}

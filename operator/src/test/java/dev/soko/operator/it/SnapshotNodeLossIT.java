package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.NodeLossSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import dev.soko.operator.harness.ControlPlane;
import dev.soko.operator.runtime.SokoOperator;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * spec.nodeLoss for snapshots on a real kube-apiserver with the real snapshot-controller (with
 * distributed snapshotting, as Soko needs it) and the operator under its own RBAC. There is no
 * kubelet and no csi-snapshotter: the test plays the node's csi-snapshotter while its Node exists
 * (it marks a content taken) and then deletes the Node, as a Node is lost. The snapshot API is
 * served here, unlike on the shared API server of the other ITs, so this class starts its own.
 */
class SnapshotNodeLossIT {
  static final String TOPOLOGY_KEY = "topology.soko.dev/node";
  static final String PROVISIONER_FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer";
  static final String CONTENT_FINALIZER =
      "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection";
  static final String MANAGED_BY = "snapshot.storage.kubernetes.io/managed-by";
  static final ResourceDefinitionContext SNAPSHOTS = context("VolumeSnapshot", true);
  static final ResourceDefinitionContext CONTENTS = context("VolumeSnapshotContent", false);
  static final ResourceDefinitionContext CLASSES = context("VolumeSnapshotClass", false);

  static ControlPlane cp;
  static KubernetesClient admin;
  static SokoOperator operator;

  @BeforeAll
  static void start() throws Exception {
    cp =
        new ControlPlane(Files.createTempDirectory("soko-snapshot-nodeloss-it"), List.of()).start();
    cp.installCrdAndRbac();
    cp.startSnapshotController();
    admin = cp.admin();
    operator =
        new SokoOperator(
            Config.fromKubeconfig(Files.readString(cp.kubeconfig("operator"))),
            null, // no leader election: losing a lease exits the JVM
            null,
            TestCluster.DEFAULT_IMAGE_REGISTRY,
            TestCluster.RESYNC,
            TestCluster.ROLLOUT_DEADLINE);
    operator.start();
  }

  /**
   * Stops the operator (given a few seconds, as {@link TestCluster} does). The control plane stays
   * until the JVM ends (its shutdown hook stops it): stopped now, it would end watches the stopped
   * operator's informers still hold, and an informer that ends with an error exits the JVM.
   */
  @AfterAll
  static void stop() throws InterruptedException {
    if (operator != null) {
      Thread closing = new Thread(operator::close, "snapshot-it-operator-close");
      closing.setDaemon(true);
      closing.start();
      closing.join(5_000);
    }
  }

  /**
   * A snapshot taken before its Node went (its content labelled with the Node, its data there) and
   * one asked for after (unlabelled: no csi-snapshotter ever takes it, "Waiting for a snapshot" for
   * ever): both VolumeSnapshots are told why, and once the Node has been gone for deleteAfter the
   * contents are released, so that deleting the VolumeSnapshots completes. Contents of the Node
   * that stays and of another driver on the lost Node are not touched.
   */
  @Test
  void deleteReleasesTheLostNodesContentsSoThatDeletingTheSnapshotsCompletes() {
    String name = "snd";
    String driver = name + ".csi.soko.dev";
    StorageCluster spec = Specs.cluster(name);
    spec.getSpec().getNodeLoss().setPolicy(NodeLossSpec.Policy.Delete);
    spec.getSpec().getNodeLoss().setDeleteAfter("30s");
    create(spec);
    String ns = name + "-apps";
    namespace(ns);
    node(name + "-keep");
    node(name + "-w1");
    snapshotClass(name + "-snap", driver);
    snapshotClass(name + "-other-snap", "other.csi.example");
    boundClaim(ns, "a", driver, name + "-w1");
    boundClaim(ns, "k", driver, name + "-keep");
    boundClaim(ns, "f", "other.csi.example", name + "-w1");

    String before = takenSnapshot(ns, "before", "a", name + "-snap", name + "-w1");
    String kept = takenSnapshot(ns, "kept", "k", name + "-snap", name + "-keep");
    String foreign = takenSnapshot(ns, "foreign", "f", name + "-other-snap", name + "-w1");
    admin.nodes().withName(name + "-w1").delete();
    snapshot(ns, "after", "a", name + "-snap");
    String after = boundContent(ns, "after");
    assertThat(content(after).getMetadata().getLabels()).doesNotContainKey(MANAGED_BY);
    String keptVersion = content(kept).getMetadata().getResourceVersion();
    String foreignVersion = content(foreign).getMetadata().getResourceVersion();

    assertThat(awaitSnapshotEvent(ns, "after").getMessage())
        .contains("Node " + name + "-w1 is gone")
        .contains("the snapshot cannot be taken")
        .contains("spec.nodeLoss Delete after 30s (StorageCluster " + name + ")")
        .contains("the operator takes its content's finalizer " + CONTENT_FINALIZER + " off");
    assertThat(awaitSnapshotEvent(ns, "before").getMessage())
        .contains("this snapshot's data is on it (VolumeSnapshotContent " + before + ")");
    Instant due =
        Instant.parse(
            admin
                .resources(StorageCluster.class)
                .withName(name)
                .get()
                .getStatus()
                .getOrphanedVolumes()
                .volumes()
                .get(0)
                .at());

    for (String vs : List.of("before", "after")) {
      admin.genericKubernetesResources(SNAPSHOTS).inNamespace(ns).withName(vs).delete();
    }
    for (String vs : List.of("before", "after")) {
      Await.until(
          "VolumeSnapshot " + vs + " deleted",
          Duration.ofSeconds(150),
          () -> admin.genericKubernetesResources(SNAPSHOTS).inNamespace(ns).withName(vs).get(),
          s -> s == null);
    }
    assertThat(Instant.now()).as("not before the delay").isAfterOrEqualTo(due);
    assertThat(content(before)).isNull();
    assertThat(content(after)).isNull();
    assertThat(clusterEvents(name, "SnapshotContentsReleased"))
        .extracting(Event::getMessage)
        .anySatisfy(m -> assertThat(m).contains(after).contains("of Node " + name + "-w1"))
        .anySatisfy(m -> assertThat(m).contains(before));
    assertThat(content(kept).getMetadata().getResourceVersion()).isEqualTo(keptVersion);
    assertThat(content(foreign).getMetadata().getResourceVersion()).isEqualTo(foreignVersion);
    assertThat(snapshotEvents(ns, "kept")).isEmpty();
    assertThat(snapshotEvents(ns, "foreign")).isEmpty();
  }

  /** With Retain the VolumeSnapshot is told why, and nothing is written to any content. */
  @Test
  void retainWarnsAndReleasesNothing() throws InterruptedException {
    String name = "snr";
    String driver = name + ".csi.soko.dev";
    create(Specs.cluster(name));
    String ns = name + "-apps";
    namespace(ns);
    node(name + "-keep");
    node(name + "-w1");
    snapshotClass(name + "-snap", driver);
    boundClaim(ns, "a", driver, name + "-w1");
    admin.nodes().withName(name + "-w1").delete();
    snapshot(ns, "after", "a", name + "-snap");
    String after = boundContent(ns, "after");
    String version = content(after).getMetadata().getResourceVersion();

    assertThat(awaitSnapshotEvent(ns, "after").getMessage())
        .contains("Node " + name + "-w1 is gone")
        .contains("spec.nodeLoss Retain (StorageCluster " + name + "): nothing is released")
        .contains(CONTENT_FINALIZER);
    Thread.sleep(3_000);
    assertThat(content(after).getMetadata().getResourceVersion()).isEqualTo(version);
    assertThat(clusterEvents(name, "SnapshotContentsReleased")).isEmpty();
  }

  // --- fixtures ------------------------------------------------------------------------------

  static ResourceDefinitionContext context(String kind, boolean namespaced) {
    return new ResourceDefinitionContext.Builder()
        .withGroup("snapshot.storage.k8s.io")
        .withVersion("v1")
        .withKind(kind)
        .withPlural(kind.toLowerCase() + (kind.endsWith("s") ? "es" : "s"))
        .withNamespaced(namespaced)
        .build();
  }

  static void create(StorageCluster sc) {
    admin.resource(sc).create();
    String name = sc.getMetadata().getName();
    Await.until(
        name + " applied",
        () -> admin.resources(StorageCluster.class).withName(name).get(),
        s -> s.getStatus() != null && s.getStatus().getAppliedObjects() != null);
  }

  static void namespace(String ns) {
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
  }

  /** A Node as the kubelet leaves it with the driver registered: its topology label set. */
  static void node(String name) {
    admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels(TOPOLOGY_KEY, name)
                .endMetadata()
                .build())
        .create();
  }

  static void snapshotClass(String name, String driver) {
    admin
        .genericKubernetesResources(CLASSES)
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion("snapshot.storage.k8s.io/v1")
                .withKind("VolumeSnapshotClass")
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .addToAdditionalProperties("driver", driver)
                .addToAdditionalProperties("deletionPolicy", "Delete")
                .build())
        .create();
  }

  /** Claim data-{suffix} bound to PV pv-{ns}-{suffix} on {@code node}, as the provisioner does. */
  static void boundClaim(String ns, String suffix, String driver, String node) {
    String pv = "pv-" + ns + "-" + suffix;
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
                    .withStorageClassName("")
                    .withVolumeName(pv)
                    .withNewResources()
                    .addToRequests("storage", new Quantity("1Gi"))
                    .endResources()
                    .endSpec()
                    .build())
            .create();
    admin
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName(pv)
                .addToFinalizers(PROVISIONER_FINALIZER)
                .endMetadata()
                .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withPersistentVolumeReclaimPolicy("Delete")
                .withStorageClassName("")
                .withNewCsi()
                .withDriver(driver)
                .withVolumeHandle("vol-" + pv)
                .endCsi()
                .withNewClaimRef()
                .withKind("PersistentVolumeClaim")
                .withNamespace(ns)
                .withName("data-" + suffix)
                .withUid(pvc.getMetadata().getUid())
                .endClaimRef()
                .withNewNodeAffinity()
                .withNewRequired()
                .addNewNodeSelectorTerm()
                .addNewMatchExpression()
                .withKey(TOPOLOGY_KEY)
                .withOperator("In")
                .withValues(node)
                .endMatchExpression()
                .endNodeSelectorTerm()
                .endRequired()
                .endNodeAffinity()
                .endSpec()
                .build())
        .create();
    // The controller-manager's binder: the claim Bound (snapshot-controller requires it).
    pvc.setStatus(
        new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder()
            .withPhase("Bound")
            .withAccessModes("ReadWriteOnce")
            .withCapacity(Map.of("storage", new Quantity("1Gi")))
            .build());
    admin.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
  }

  static void snapshot(String ns, String name, String claim, String snapshotClass) {
    admin
        .genericKubernetesResources(SNAPSHOTS)
        .inNamespace(ns)
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion("snapshot.storage.k8s.io/v1")
                .withKind("VolumeSnapshot")
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .endMetadata()
                .addToAdditionalProperties(
                    "spec",
                    Map.of(
                        "volumeSnapshotClassName",
                        snapshotClass,
                        "source",
                        Map.of("persistentVolumeClaimName", "data-" + claim)))
                .build())
        .create();
  }

  /** The name of the content snapshot-controller made for the VolumeSnapshot. */
  static String boundContent(String ns, String snapshot) {
    GenericKubernetesResource vs =
        Await.until(
            "content of " + snapshot,
            Duration.ofSeconds(60),
            () ->
                admin
                    .genericKubernetesResources(SNAPSHOTS)
                    .inNamespace(ns)
                    .withName(snapshot)
                    .get(),
            s -> s.get("status", "boundVolumeSnapshotContentName") instanceof String);
    String content = (String) vs.get("status", "boundVolumeSnapshotContentName");
    Await.until("content " + content, () -> content(content), c -> c != null);
    return content;
  }

  /**
   * A snapshot taken while its Node exists: its content labelled with the Node by
   * snapshot-controller, then marked taken as the Node's csi-snapshotter does.
   */
  static String takenSnapshot(String ns, String name, String claim, String cls, String node) {
    snapshot(ns, name, claim, cls);
    String content = boundContent(ns, name);
    GenericKubernetesResource c =
        Await.until(
            "content " + content + " labelled and held",
            () -> content(content),
            x ->
                x.getMetadata().getLabels() != null
                    && node.equals(x.getMetadata().getLabels().get(MANAGED_BY))
                    && x.getMetadata().getFinalizers().contains(CONTENT_FINALIZER));
    c.getAdditionalProperties()
        .put(
            "status",
            Map.of(
                "snapshotHandle",
                "snap-" + name,
                "readyToUse",
                true,
                "restoreSize",
                1073741824L,
                "creationTime",
                System.currentTimeMillis() * 1_000_000L));
    admin.genericKubernetesResources(CONTENTS).resource(c).updateStatus();
    return content;
  }

  static GenericKubernetesResource content(String name) {
    return admin.genericKubernetesResources(CONTENTS).withName(name).get();
  }

  static List<Event> snapshotEvents(String ns, String snapshot) {
    return admin.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> "VolumeSnapshot".equals(e.getInvolvedObject().getKind()))
        .filter(e -> snapshot.equals(e.getInvolvedObject().getName()))
        .filter(e -> "SnapshotNodeLost".equals(e.getReason()))
        .toList();
  }

  static Event awaitSnapshotEvent(String ns, String snapshot) {
    return Await.until(
            "SnapshotNodeLost on " + ns + "/" + snapshot,
            Duration.ofSeconds(60),
            () -> snapshotEvents(ns, snapshot),
            l -> !l.isEmpty())
        .get(0);
  }

  static List<Event> clusterEvents(String name, String reason) {
    return admin.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> name.equals(e.getInvolvedObject().getName()))
        .filter(e -> reason.equals(e.getReason()))
        .toList();
  }
}

package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.report.GroupSnapshotClasses;
import dev.soko.driver.report.GroupSnapshotContents;
import dev.soko.driver.testing.Await;
import dev.soko.driver.testing.NodePluginApiServer;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A pre-provisioned snapshot, end to end on a real kube-apiserver (kube-api-test, offline,
 * loopback, RBAC on, the VolumeSnapshot CRDs of the pinned external-snapshotter): a real driver jar
 * as node-a's plugin, under a ServiceAccount holding exactly the node plugin's rules, takes a
 * snapshot; a VolumeSnapshotContent created from that snapshot's handle, without the managed-by
 * label (as a user or a backup tool creates it), gets node-a as its label, which is what node-a's
 * csi-snapshotter (--node-deployment) lists by. Contents this node cannot serve are left as they
 * are. The driver then answers what csi-snapshotter asks of such a content: ListSnapshots by ID,
 * and DeleteSnapshot when it is deleted with deletionPolicy Delete. With the VolumeGroupSnapshot
 * CRDs too, a group member's content (its snapshot handle in the status) gets node-a's label, and
 * the controller-mode driver's labeller gives each group content the group snapshotter's identity.
 */
class SnapshotImportIT {
  static final String NODE = "node-a";
  static final String DRIVER = "csi.soko.dev";
  static final String MANAGED_BY = "snapshot.storage.kubernetes.io/managed-by";
  static final long MIB = 1L << 20;

  /** A watch event and one PATCH: well under a second; the rest is a loaded machine. */
  static final Duration LABEL_BOUND = Duration.ofSeconds(20);

  static NodePluginApiServer api;
  static KubernetesClient admin;
  static Path dir;

  DriverJar driver;

  @BeforeAll
  static void startServer() throws Exception {
    dir = Files.createTempDirectory("soko-import-");
    api = NodePluginApiServer.start();
    api.serveSnapshots();
    api.serveGroupSnapshots();
    admin = api.admin();
  }

  @AfterAll
  static void stopServer() {
    if (api != null) {
      api.close();
    }
  }

  @AfterEach
  void stopDriver() throws Exception {
    if (driver != null) {
      driver.close();
    }
  }

  @Test
  void anImportedContentOfASnapshotThisNodeHoldsIsLabelledForItAndServed() throws Exception {
    CsiClient csi = start();
    String volume = volume(csi, "source");
    Csi.Snapshot snapshot =
        csi.controller().createSnapshot(Requests.createSnapshot("backup", volume)).getSnapshot();
    String held = snapshot.getSnapshotId();
    String nobodys = "snap-" + "n".repeat(20);

    // Created first: by the time the import is labelled, the driver has seen these too.
    create(content("unknown-handle", DRIVER, nobodys, "Retain", null));
    create(content("other-driver", "other.csi.example", held, "Retain", null));
    create(content("other-node", DRIVER, held, "Retain", "node-b"));
    create(content("imported", DRIVER, held, "Delete", null));

    Await.until(
        "VolumeSnapshotContent imported labelled " + NODE,
        LABEL_BOUND,
        () -> NODE.equals(label("imported")));
    assertThat(label("unknown-handle")).as("a handle no node holds stays unlabelled").isNull();
    assertThat(label("other-driver")).as("another driver's content").isNull();
    assertThat(label("other-node")).as("a labelled content is never changed").isEqualTo("node-b");
    assertThat(contents().withLabel(MANAGED_BY, NODE).list().getItems())
        .extracting(c -> c.getMetadata().getName())
        .containsExactly("imported");
    assertThat(driver.log()).contains("labelled a pre-provisioned VolumeSnapshotContent");

    // What csi-snapshotter asks for readiness (GetSnapshotStatus: ListSnapshots by snapshot_id).
    List<Csi.ListSnapshotsResponse.Entry> entries =
        csi.controller()
            .listSnapshots(Csi.ListSnapshotsRequest.newBuilder().setSnapshotId(held).build())
            .getEntriesList();
    assertThat(entries).hasSize(1);
    Csi.Snapshot listed = entries.get(0).getSnapshot();
    assertThat(listed.getReadyToUse()).isTrue();
    assertThat(listed.getSizeBytes()).isEqualTo(16 * MIB);
    assertThat(listed.getCreationTime().getSeconds()).isPositive();
    assertThat(listed.getSourceVolumeId()).isEqualTo(volume);
    assertThat(
            csi.controller()
                .listSnapshots(Csi.ListSnapshotsRequest.newBuilder().setSnapshotId(nobodys).build())
                .getEntriesList())
        .as("an ID this node does not hold: no entry (csi-snapshotter: cannot find snapshot)")
        .isEmpty();
    // A restore from the imported snapshot, as a claim with it as dataSource asks.
    assertThat(
            csi.controller()
                .createVolume(
                    Requests.restoreVolume("restored", 16 * MIB, Requests.mount("ext4"), held))
                .getVolume()
                .getContentSource()
                .getSnapshot()
                .getSnapshotId())
        .isEqualTo(held);
    // deletionPolicy Delete: csi-snapshotter deletes the snapshot by its handle.
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(held));
    assertThat(
            csi.controller()
                .listSnapshots(Csi.ListSnapshotsRequest.newBuilder().setSnapshotId(held).build())
                .getEntriesList())
        .isEmpty();
  }

  @Test
  void aContentImportedWhileTheDriverIsDownIsLabelledWhenItStarts() throws Exception {
    CsiClient csi = start();
    String volume = volume(csi, "offline-source");
    String held =
        csi.controller()
            .createSnapshot(Requests.createSnapshot("offline-backup", volume))
            .getSnapshot()
            .getSnapshotId();
    driver.stop();

    create(content("imported-while-down", DRIVER, held, "Retain", null));
    driver.startWithPools(pools(), flags());

    Await.until(
        "VolumeSnapshotContent imported-while-down labelled " + NODE,
        LABEL_BOUND,
        () -> NODE.equals(label("imported-while-down")));
  }

  @Test
  void
      aGroupMembersContentIsLabelledForTheNodeThatHoldsItsSnapshotAndGroupContentsForTheController()
          throws Exception {
    CsiClient csi = start();
    String data = volume(csi, "group-data");
    String log = volume(csi, "group-log");
    Csi.VolumeGroupSnapshot group =
        csi.groupController()
            .createVolumeGroupSnapshot(
                Csi.CreateVolumeGroupSnapshotRequest.newBuilder()
                    .setName("group-backup")
                    .addSourceVolumeIds(data)
                    .addSourceVolumeIds(log)
                    .build())
            .getGroupSnapshot();
    String member = group.getSnapshots(0).getSnapshotId();
    Path controllerDir = Files.createDirectories(dir.resolve("controller-" + System.nanoTime()));
    KubeApi controllerApi = KubeApi.fromEnvironment(api.controller(controllerDir)).orElseThrow();
    createGroup(groupContent("dynamic", DRIVER, dynamic(data, log)));
    createGroup(groupContent("other-driver-group", "other.csi.example", dynamic(data, log)));

    // As the snapshot-controller makes a member's content: the source volume in the spec, the
    // group in an annotation, the snapshot handle written to the status afterwards.
    GenericKubernetesResource memberContent =
        content("group-member", DRIVER, "unused", "Retain", null);
    memberContent.setAdditionalProperty(
        "spec",
        Map.of(
            "driver",
            DRIVER,
            "deletionPolicy",
            "Retain",
            "source",
            Map.of("volumeHandle", data),
            "volumeSnapshotRef",
            Map.of("namespace", "default", "name", "group-member")));
    memberContent
        .getMetadata()
        .setAnnotations(
            Map.of(
                "groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle",
                group.getGroupSnapshotId() + "@" + NODE));
    admin
        .genericKubernetesResources("groupsnapshot.storage.k8s.io/v1", "VolumeGroupSnapshotClass")
        .resource(groupClass("made-by-a-suite", DRIVER))
        .create();
    admin
        .genericKubernetesResources("groupsnapshot.storage.k8s.io/v1", "VolumeGroupSnapshotClass")
        .resource(groupClass("another-drivers", "other.csi.example"))
        .create();
    try (GroupSnapshotContents labeller =
            new GroupSnapshotContents(controllerApi, DRIVER, "soko_groups");
        GroupSnapshotClasses classes =
            new GroupSnapshotClasses(controllerApi, DRIVER, "soko_groups")) {
      labeller.start();
      classes.start();
      create(memberContent);
      GenericKubernetesResource created = contents().withName("group-member").get();
      created.setAdditionalProperty("status", Map.of("snapshotHandle", member));
      contents().resource(created).updateStatus();

      Await.until(
          "the group content labelled for the group snapshotter and the member's for " + NODE,
          LABEL_BOUND,
          () ->
              "soko_groups".equals(groupLabel("dynamic"))
                  && "soko_groups".equals(classLabel("made-by-a-suite"))
                  && NODE.equals(label("group-member")));
    } finally {
      contents().withName("group-member").delete(); // the other tests count this node's contents
    }
    assertThat(groupLabel("other-driver-group")).as("another driver's content").isNull();
    assertThat(classLabel("another-drivers")).as("another driver's class").isNull();

    // What the node of a group's first volume answers when another volume is elsewhere; the
    // group snapshotter records it on the content and the VolumeGroupSnapshot.
    String nobodys = "vol-" + "n".repeat(20);
    assertThatThrownBy(
            () ->
                csi.groupController()
                    .createVolumeGroupSnapshot(
                        Csi.CreateVolumeGroupSnapshotRequest.newBuilder()
                            .setName("spread")
                            .addSourceVolumeIds(data)
                            .addSourceVolumeIds(nobodys)
                            .build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND))
        .hasMessageContaining("is not on this node \"" + NODE + "\"")
        .hasMessageContaining("must all be on one node");
  }

  /** A VolumeGroupSnapshotClass as an admin or a test suite writes it: no label. */
  static GenericKubernetesResource groupClass(String name, String driverName) {
    GenericKubernetesResource groupClass = new GenericKubernetesResource();
    groupClass.setApiVersion("groupsnapshot.storage.k8s.io/v1");
    groupClass.setKind("VolumeGroupSnapshotClass");
    groupClass.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMeta());
    groupClass.getMetadata().setName(name);
    groupClass.setAdditionalProperty("driver", driverName);
    groupClass.setAdditionalProperty("deletionPolicy", "Delete");
    return groupClass;
  }

  static String classLabel(String name) {
    Map<String, String> labels =
        admin
            .genericKubernetesResources(
                "groupsnapshot.storage.k8s.io/v1", "VolumeGroupSnapshotClass")
            .withName(name)
            .get()
            .getMetadata()
            .getLabels();
    return labels == null ? null : labels.get(MANAGED_BY);
  }

  static String volume(CsiClient csi, String name) {
    return csi.controller()
        .createVolume(Requests.createVolume(name, 16 * MIB, Requests.mount("ext4")))
        .getVolume()
        .getVolumeId();
  }

  CsiClient start() throws Exception {
    Path root = Files.createDirectories(dir.resolve("run-" + System.nanoTime()));
    driver = new DriverJar(root).asNode(NODE, api.nodePlugin(root));
    Files.createDirectories(root.resolve("disk"));
    return driver.startWithPools(pools(), flags());
  }

  List<String> pools() {
    return List.of("name=disk,path=" + driver.root.resolve("disk") + ",capacity=1Gi");
  }

  static List<String> flags() {
    return List.of("--driver-name", DRIVER, "--label-imported-snapshots=true");
  }

  static NonNamespaceOperation<
          GenericKubernetesResource,
          GenericKubernetesResourceList,
          Resource<GenericKubernetesResource>>
      contents() {
    return admin.genericKubernetesResources("snapshot.storage.k8s.io/v1", "VolumeSnapshotContent");
  }

  static void create(GenericKubernetesResource content) {
    contents().resource(content).create();
  }

  static String label(String name) {
    GenericKubernetesResource content = contents().withName(name).get();
    Map<String, String> labels = content.getMetadata().getLabels();
    return labels == null ? null : labels.get(MANAGED_BY);
  }

  /** A pre-provisioned content as a user writes it: a snapshot handle and the snapshot it binds. */
  static GenericKubernetesResource content(
      String name, String driverName, String handle, String deletionPolicy, String managedBy) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("driver", driverName);
    spec.put("deletionPolicy", deletionPolicy);
    spec.put("source", Map.of("snapshotHandle", handle));
    spec.put("volumeSnapshotRef", Map.of("namespace", "default", "name", name));
    return resource("snapshot.storage.k8s.io/v1", "VolumeSnapshotContent", name, managedBy, spec);
  }

  /** A cluster-scoped object; a null {@code managedBy} leaves the label out. */
  static GenericKubernetesResource resource(
      String apiVersion, String kind, String name, String managedBy, Map<String, Object> spec) {
    GenericKubernetesResource resource = new GenericKubernetesResource();
    resource.setApiVersion(apiVersion);
    resource.setKind(kind);
    resource.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMeta());
    resource.getMetadata().setName(name);
    if (managedBy != null) {
      resource.getMetadata().setLabels(Map.of(MANAGED_BY, managedBy));
    }
    resource.setAdditionalProperty("spec", spec);
    return resource;
  }

  static NonNamespaceOperation<
          GenericKubernetesResource,
          GenericKubernetesResourceList,
          Resource<GenericKubernetesResource>>
      groupContents() {
    return admin.genericKubernetesResources(
        "groupsnapshot.storage.k8s.io/v1", "VolumeGroupSnapshotContent");
  }

  static void createGroup(GenericKubernetesResource content) {
    groupContents().resource(content).create();
  }

  static String groupLabel(String name) {
    Map<String, String> labels = groupContents().withName(name).get().getMetadata().getLabels();
    return labels == null ? null : labels.get(MANAGED_BY);
  }

  /** A dynamic group content's source: the volumes, in the snapshot-controller's order. */
  static Map<String, Object> dynamic(String... volumeHandles) {
    return Map.of("volumeHandles", List.of(volumeHandles));
  }

  /** A group content as the snapshot-controller or a user writes it, without a label. */
  static GenericKubernetesResource groupContent(
      String name, String driverName, Map<String, Object> source) {
    return resource(
        "groupsnapshot.storage.k8s.io/v1",
        "VolumeGroupSnapshotContent",
        name,
        null,
        Map.of(
            "driver",
            driverName,
            "deletionPolicy",
            "Retain",
            "source",
            source,
            "volumeGroupSnapshotRef",
            Map.of("namespace", "default", "name", name)));
  }
}

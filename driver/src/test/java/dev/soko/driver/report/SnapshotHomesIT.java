package dev.soko.driver.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.testing.NodePluginApiServer;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The locator on a real kube-apiserver (kube-api-test, offline, loopback, RBAC on, the pinned
 * external-snapshotter's CRDs and the crd module's StorageNode CRD), under a ServiceAccount holding
 * exactly the node plugin's rules: it may list the contents, get the Nodes and get the StorageNodes
 * it needs, and reads each answer as the API server really gives it.
 */
class SnapshotHomesIT {
  static final String DRIVER = "csi.soko.dev";
  static final String CLUSTER = "soko";
  static final String THIS_NODE = "node-a";
  static final String ENDPOINT = "10.244.1.7:9810";
  static final String STORAGE_NODE_CRD = "../crd/src/generated/crds/storagenodes.soko.dev-v1.yml";

  static NodePluginApiServer api;
  static KubernetesClient admin;

  @TempDir Path dir;
  final List<String> described = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void startServer() throws Exception {
    api = NodePluginApiServer.start();
    api.serveSnapshots();
    api.servePersistentVolumeReads();
    admin = api.admin();
  }

  @AfterAll
  static void stopServer() {
    if (api != null) {
      api.close();
    }
  }

  SnapshotHomes homes() throws Exception {
    KubeApi client = KubeApi.fromEnvironment(api.nodePlugin(dir)).orElseThrow();
    return new SnapshotHomes(
        client,
        DRIVER,
        THIS_NODE,
        CLUSTER,
        (node, endpoint, id) -> {
          described.add(node + " " + endpoint + " " + id);
          return Optional.of(SnapshotHomesTest.snapshot(id, node));
        },
        (node, endpoint, id) -> {
          described.add("volume " + node + " " + endpoint + " " + id);
          return Optional.of(SnapshotHomesTest.snapshot(id, node));
        });
  }

  @Test
  void aVolumesNodeIsTheOneItsPersistentVolumeNamesAskedAtItsEndpoint() throws Exception {
    Assumptions.assumeTrue(
        Files.readString(Path.of(STORAGE_NODE_CRD)).contains("dataEndpoint"),
        "the StorageNode CRD has no dataEndpoint field yet: the API server would prune it");
    String id = "vol-" + "d".repeat(20);
    admin
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pvc-clone-source")
                .endMetadata()
                .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("64Mi")))
                .withAccessModes("ReadWriteOnce")
                .withNewCsi()
                .withDriver(DRIVER)
                .withVolumeHandle(id)
                .endCsi()
                .withNewNodeAffinity()
                .withNewRequired()
                .addNewNodeSelectorTerm()
                .addNewMatchExpression()
                .withKey("topology.soko.dev/node")
                .withOperator("In")
                .withValues("node-d")
                .endMatchExpression()
                .endNodeSelectorTerm()
                .endRequired()
                .endNodeAffinity()
                .endSpec()
                .build())
        .create();
    node("node-d");
    storageNode("node-d", ENDPOINT);
    SnapshotHomes homes = homes();

    assertThat(homes.findVolume(id)).map(RemoteSnapshot::node).hasValue("node-d");
    assertThat(described).containsExactly("volume node-d " + ENDPOINT + " " + id);
    assertThat(homes.findVolume("vol-" + "n".repeat(20))).as("no PV names it").isEmpty();
  }

  @Test
  void aLabelledContentsNodeIsAskedAtTheEndpointItsStorageNodeAdvertises() throws Exception {
    Assumptions.assumeTrue(
        Files.readString(Path.of(STORAGE_NODE_CRD)).contains("dataEndpoint"),
        "the StorageNode CRD has no dataEndpoint field yet: the API server would prune it");
    String id = "snap-" + "f".repeat(20);
    content("found", id, "node-b");
    node("node-b");
    storageNode("node-b", ENDPOINT);

    Optional<RemoteSnapshot> found = homes().find(id);

    assertThat(found).map(RemoteSnapshot::node).hasValue("node-b");
    assertThat(described).containsExactly("node-b " + ENDPOINT + " " + id);
  }

  @Test
  void anUnlabelledContentOrAnUnknownIdFindsNoNode() throws Exception {
    String id = "snap-" + "u".repeat(20);
    content("unlabelled", id, null);
    SnapshotHomes homes = homes();
    assertThat(homes.find(id)).isEmpty();
    assertThat(homes.find("snap-" + "n".repeat(20))).isEmpty();
    assertThat(described).isEmpty();
  }

  @Test
  void aSnapshotLabelledWithThisNodeIsNotLookedForElsewhere() throws Exception {
    String id = "snap-" + "t".repeat(20);
    content("this-node", id, THIS_NODE);
    assertThat(homes().find(id)).isEmpty();
    assertThat(described).isEmpty();
  }

  @Test
  void aNodeThatIsGoneSaysSo() throws Exception {
    String id = "snap-" + "g".repeat(20);
    content("gone", id, "node-gone");
    StorageException e = catchThrowableOfType(StorageException.class, () -> homes().find(id));
    assertThat(e.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "snapshot "
                + id
                + " is on node node-gone, which is gone (its Node object no longer exists); its"
                + " data cannot be copied");
  }

  @Test
  void aNodeWhoseStorageNodeHasNoDataEndpointSaysSo() throws Exception {
    String id = "snap-" + "e".repeat(20);
    content("no-endpoint", id, "node-c");
    node("node-c");
    storageNode("node-c", null);
    StorageException e = catchThrowableOfType(StorageException.class, () -> homes().find(id));
    assertThat(e.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "snapshot "
                + id
                + " is on node node-c, but node node-c's driver does not serve the data path"
                + " (StorageNode soko.node-c has no dataEndpoint); its data cannot be copied");
  }

  static void content(String name, String handle, String managedBy) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("driver", DRIVER);
    spec.put("deletionPolicy", "Retain");
    spec.put("source", Map.of("snapshotHandle", handle));
    spec.put("volumeSnapshotRef", Map.of("namespace", "default", "name", name));
    GenericKubernetesResource content = new GenericKubernetesResource();
    content.setApiVersion("snapshot.storage.k8s.io/v1");
    content.setKind("VolumeSnapshotContent");
    content.setMetadata(new ObjectMeta());
    content.getMetadata().setName(name);
    if (managedBy != null) {
      content.getMetadata().setLabels(Map.of(SnapshotContent.MANAGED_BY, managedBy));
    }
    content.setAdditionalProperty("spec", spec);
    admin.resource(content).create();
  }

  static void node(String name) {
    admin
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  /** The StorageNode {@code <cluster>.<node>}, as the node's driver applies it. */
  static void storageNode(String node, String endpoint) {
    GenericKubernetesResource report = new GenericKubernetesResource();
    report.setApiVersion("soko.dev/v1alpha1");
    report.setKind("StorageNode");
    report.setMetadata(new ObjectMeta());
    report.getMetadata().setName(CLUSTER + "." + node);
    report.setAdditionalProperty("node", node);
    if (endpoint != null) {
      report.setAdditionalProperty("dataEndpoint", endpoint);
    }
    admin.resource(report).create();
  }
}

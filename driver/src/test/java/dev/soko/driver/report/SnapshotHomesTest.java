package dev.soko.driver.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.json.Json;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.report.ApiServerFake.Answer;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The locator against a fake API server: which node a snapshot's content names, whether that node
 * still exists, and the data endpoint its StorageNode advertises.
 */
class SnapshotHomesTest {
  static final String DRIVER = "csi.soko.dev";
  static final String ID = "snap-elsewhereelsewherexx";
  static final String ENDPOINT = "10.0.0.2:9810";

  @TempDir Path dir;
  ApiServerFake api;
  final List<Map<String, Object>> contents = new ArrayList<>();
  final List<Map<String, Object>> volumes = new ArrayList<>();
  final Map<String, String> nodes = new LinkedHashMap<>();
  final Map<String, String> storageNodes = new LinkedHashMap<>();
  final List<String> described = new CopyOnWriteArrayList<>();
  SnapshotHomes homes;

  @BeforeEach
  void start() throws Exception {
    api = new ApiServerFake();
    api.answers = this::answer;
    homes =
        new SnapshotHomes(
            api.client(dir, "t"),
            DRIVER,
            "node-1",
            "soko",
            (node, endpoint, id) -> {
              described.add(node + " " + endpoint + " " + id);
              return Optional.of(snapshot(id, node));
            },
            (node, endpoint, id) -> {
              described.add("volume " + node + " " + endpoint + " " + id);
              return Optional.of(snapshot(id, node));
            });
  }

  @AfterEach
  void stop() {
    api.close();
  }

  /** The API server: a list of the contents (two to a page), Nodes and StorageNodes by name. */
  private Answer answer(ApiServerFake.Request request) {
    String uri = request.uri();
    if (uri.startsWith(SnapshotHomes.CONTENTS + "?")) {
      int from =
          uri.contains("continue=") ? Integer.parseInt(uri.replaceAll(".*continue=", "")) : 0;
      int to = Math.min(contents.size(), from + 2);
      Map<String, Object> meta = new LinkedHashMap<>();
      meta.put("resourceVersion", "9");
      if (to < contents.size()) {
        meta.put("continue", Integer.toString(to));
      }
      return new Answer(
          200, Json.write(Map.of("metadata", meta, "items", contents.subList(from, to))));
    }
    if (uri.startsWith(SnapshotHomes.VOLUMES + "?")) {
      int from =
          uri.contains("continue=") ? Integer.parseInt(uri.replaceAll(".*continue=", "")) : 0;
      int to = Math.min(volumes.size(), from + 2);
      Map<String, Object> meta = new LinkedHashMap<>();
      if (to < volumes.size()) {
        meta.put("continue", Integer.toString(to));
      }
      return new Answer(
          200, Json.write(Map.of("metadata", meta, "items", volumes.subList(from, to))));
    }
    if (uri.startsWith("/api/v1/nodes/")) {
      String body = nodes.get(uri.substring("/api/v1/nodes/".length()));
      return body == null ? new Answer(404, "{\"reason\":\"NotFound\"}") : new Answer(200, body);
    }
    if (uri.startsWith(SnapshotHomes.STORAGE_NODES)) {
      String body = storageNodes.get(uri.substring(SnapshotHomes.STORAGE_NODES.length()));
      return body == null ? new Answer(404, "{\"reason\":\"NotFound\"}") : new Answer(200, body);
    }
    return new Answer(500, "{\"unexpected\":\"" + uri + "\"}");
  }

  static Map<String, Object> content(
      String name, String driver, String specHandle, String statusHandle, String managedBy) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("name", name);
    if (managedBy != null) {
      metadata.put("labels", Map.of(SnapshotContent.MANAGED_BY, managedBy));
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("driver", driver);
    spec.put(
        "source",
        specHandle == null
            ? Map.of("volumeHandle", "vol-x")
            : Map.of("snapshotHandle", specHandle));
    Map<String, Object> content = new LinkedHashMap<>();
    content.put("metadata", metadata);
    content.put("spec", spec);
    if (statusHandle != null) {
      content.put("status", Map.of("snapshotHandle", statusHandle));
    }
    return content;
  }

  /** A PersistentVolume of {@code driver} for {@code handle}, pinned to {@code node}. */
  static Map<String, Object> volume(String name, String driver, String handle, String node) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("csi", Map.of("driver", driver, "volumeHandle", handle));
    if (node != null) {
      spec.put(
          "nodeAffinity",
          Map.of(
              "required",
              Map.of(
                  "nodeSelectorTerms",
                  List.of(
                      Map.of(
                          "matchExpressions",
                          List.of(
                              Map.of(
                                  "key",
                                  "topology.soko.dev/node",
                                  "operator",
                                  "In",
                                  "values",
                                  List.of(node))))))));
    }
    return Map.of("metadata", Map.of("name", name), "spec", spec);
  }

  void nodeUp(String node, String endpoint) {
    nodes.put(node, "{\"metadata\":{\"name\":\"" + node + "\"}}");
    storageNodes.put(
        "soko." + node,
        endpoint == null
            ? "{\"metadata\":{\"name\":\"soko." + node + "\"},\"node\":\"" + node + "\"}"
            : "{\"metadata\":{\"name\":\"soko."
                + node
                + "\"},\"node\":\""
                + node
                + "\",\"dataEndpoint\":\""
                + endpoint
                + "\"}");
  }

  @Test
  void theNodeTheContentsLabelNamesIsAskedAtItsDataEndpoint() {
    contents.add(content("other-driver", "other.csi.example", ID, null, "node-9"));
    contents.add(content("another-snapshot", DRIVER, "snap-" + "a".repeat(20), null, "node-3"));
    contents.add(content("dynamic", DRIVER, null, ID, "node-2"));
    nodeUp("node-2", ENDPOINT);

    Optional<RemoteSnapshot> found = homes.find(ID);

    assertThat(found).map(RemoteSnapshot::node).hasValue("node-2");
    assertThat(described).containsExactly("node-2 " + ENDPOINT + " " + ID);
    assertThat(api.seen.get(0).uri())
        .as("only labelled contents are listed, a page at a time")
        .isEqualTo(
            SnapshotHomes.CONTENTS
                + "?labelSelector=snapshot.storage.kubernetes.io%2Fmanaged-by&limit=500");
    assertThat(api.seen)
        .extracting(ApiServerFake.Request::uri)
        .contains("/api/v1/nodes/node-2", SnapshotHomes.STORAGE_NODES + "soko.node-2");
  }

  @Test
  void anImportedContentNamesItsSnapshotInItsSpec() {
    contents.add(content("imported", DRIVER, ID, null, "node-2"));
    nodeUp("node-2", ENDPOINT);
    assertThat(homes.find(ID)).isPresent();
    assertThat(described).containsExactly("node-2 " + ENDPOINT + " " + ID);
  }

  @Test
  void aContentWithoutALabelOrNoContentAtAllMeansNoNodeIsKnownToHoldIt() {
    contents.add(content("unlabelled", DRIVER, ID, null, null));
    contents.add(content("empty-label", DRIVER, ID, null, ""));
    assertThat(homes.find(ID)).isEmpty();
    contents.clear();
    assertThat(homes.find(ID)).isEmpty();
    assertThat(described).isEmpty();
    assertThat(api.seen)
        .extracting(ApiServerFake.Request::uri)
        .allMatch(uri -> uri.startsWith(SnapshotHomes.CONTENTS));
  }

  @Test
  void aSnapshotLabelledWithThisNodeIsNotLookedForElsewhere() {
    contents.add(content("mine", DRIVER, null, ID, "node-1"));
    assertThat(homes.find(ID)).isEmpty();
    assertThat(described).isEmpty();
  }

  @Test
  void theLaterPagesAreReadUntilTheContentIsFound() {
    for (int i = 0; i < 5; i++) {
      contents.add(
          content("other-" + i, DRIVER, "snap-" + Integer.toString(i).repeat(20), null, "node-3"));
    }
    contents.add(content("dynamic", DRIVER, null, ID, "node-2"));
    nodeUp("node-2", ENDPOINT);
    assertThat(homes.find(ID)).isPresent();
    assertThat(api.seen)
        .extracting(ApiServerFake.Request::uri)
        .filteredOn(uri -> uri.startsWith(SnapshotHomes.CONTENTS))
        .hasSize(3);
  }

  @Test
  void aNodeThatIsGoneIsUnavailableInPlainWords() {
    contents.add(content("dynamic", DRIVER, null, ID, "node-2"));
    storageNodes.put("soko.node-2", "{\"dataEndpoint\":\"" + ENDPOINT + "\"}"); // a stale report
    StorageException e = catchThrowableOfType(StorageException.class, () -> homes.find(ID));
    assertThat(e.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "snapshot "
                + ID
                + " is on node node-2, which is gone (its Node object no longer exists); its data"
                + " cannot be copied");
    assertThat(described).isEmpty();
  }

  @Test
  void aNodeWhoseDriverAdvertisesNoDataEndpointIsUnavailableInPlainWords() {
    contents.add(content("dynamic", DRIVER, null, ID, "node-2"));
    nodeUp("node-2", null);
    StorageException e = catchThrowableOfType(StorageException.class, () -> homes.find(ID));
    assertThat(e.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "snapshot "
                + ID
                + " is on node node-2, but node node-2's driver does not serve the data path"
                + " (StorageNode soko.node-2 has no dataEndpoint); its data cannot be copied");

    storageNodes.clear();
    e = catchThrowableOfType(StorageException.class, () -> homes.find(ID));
    assertThat(e.getMessage()).contains("(StorageNode soko.node-2 does not exist)");
    assertThat(described).isEmpty();
  }

  @Test
  void anApiServerThatCannotBeReadIsUnavailableAndSaysWhat() {
    api.answers = request -> new Answer(403, "{\"reason\":\"Forbidden\"}");
    StorageException e = catchThrowableOfType(StorageException.class, () -> homes.find(ID));
    assertThat(e.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith(
            "cannot find which node holds snapshot "
                + ID
                + ": could not list the VolumeSnapshotContents (HTTP 403");
  }

  static final String VOLUME = "vol-elsewhereelsewhereel";

  @Test
  void aVolumesNodeIsTheOneItsPersistentVolumesAffinityNamesAndIsAskedAtItsEndpoint() {
    for (int i = 0; i < 3; i++) {
      volumes.add(volume("pv-" + i, DRIVER, "vol-" + Integer.toString(i).repeat(20), "node-3"));
    }
    volumes.add(volume("pv-other-driver", "other.csi.example", VOLUME, "node-9"));
    volumes.add(volume("pv-clone-source", DRIVER, VOLUME, "node-2"));
    nodeUp("node-2", ENDPOINT);

    Optional<RemoteSnapshot> found = homes.findVolume(VOLUME);

    assertThat(found).map(RemoteSnapshot::node).hasValue("node-2");
    assertThat(described).containsExactly("volume node-2 " + ENDPOINT + " " + VOLUME);
    assertThat(api.seen)
        .extracting(ApiServerFake.Request::uri)
        .filteredOn(uri -> uri.startsWith(SnapshotHomes.VOLUMES))
        .as("every page until the PV is found")
        .hasSize(3);
  }

  @Test
  void aVolumeNoPersistentVolumeNamesOrOneOfThisNodeIsNotFoundElsewhere() {
    assertThat(homes.findVolume(VOLUME)).isEmpty();
    volumes.add(volume("pv-mine", DRIVER, VOLUME, "node-1"));
    assertThat(homes.findVolume(VOLUME)).isEmpty();
    volumes.clear();
    volumes.add(volume("pv-unpinned", DRIVER, VOLUME, null));
    assertThat(homes.findVolume(VOLUME)).isEmpty();
    assertThat(described).isEmpty();
  }

  @Test
  void aVolumeWhoseNodeIsGoneIsUnavailableInPlainWords() {
    volumes.add(volume("pv-clone-source", DRIVER, VOLUME, "node-2"));
    StorageException e =
        catchThrowableOfType(StorageException.class, () -> homes.findVolume(VOLUME));
    assertThat(e.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "volume "
                + VOLUME
                + " is on node node-2, which is gone (its Node object no longer exists); its data"
                + " cannot be copied");
    assertThat(described).isEmpty();
  }

  static RemoteSnapshot snapshot(String id, String node) {
    return new RemoteSnapshot() {
      @Override
      public String id() {
        return id;
      }

      @Override
      public String node() {
        return node;
      }

      @Override
      public long sizeBytes() {
        return 1L << 24;
      }

      @Override
      public AccessType accessType() {
        return AccessType.BLOCK;
      }

      @Override
      public String fsType() {
        return "";
      }

      @Override
      public void copyTo(Path target) {
        throw new UnsupportedOperationException("not copied in this test");
      }
    };
  }
}

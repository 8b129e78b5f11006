package dev.soko.driver.report;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.csi.Topology;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.RemoteSnapshots;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * Finds the node that holds a snapshot this node does not, for a restore that copies it here
 * (docs/design.md, "Node to node"). The answer comes from what already names the node: the
 * VolumeSnapshotContent of this driver whose snapshot handle is the ID carries the label {@value
 * SnapshotContent#MANAGED_BY}{@code =<node>} (the snapshot-controller sets it on dynamic contents;
 * {@link ImportedSnapshots} on imported ones and group members). That node's Node object says it
 * still exists, and its StorageNode ({@code <storagecluster>.<node>}) names the data endpoint that
 * serves the snapshot's blocks, which {@link Describer} then asks.
 *
 * <p>Asked once per restore of a snapshot not in this node's catalog, so it reads what it needs
 * then and keeps no watch: a list of the labelled contents (paged), a GET of the Node and one of
 * the StorageNode. A content that names the ID with no label, or none that names it, means no node
 * is known to hold it (empty: the restore answers NOT_FOUND as for any unknown snapshot); a node
 * that is gone, or whose driver serves no data path, is an UNAVAILABLE failure that says so.
 *
 * <p>A volume (a clone's source) is found the same way from its PersistentVolume: the node its node
 * affinity names, asked once per clone of a volume not in this node's catalog with a paged list of
 * the PersistentVolumes (which the node plugin's account already reads for its provisioner); a
 * volume no PersistentVolume names is not found.
 */
public final class SnapshotHomes implements RemoteSnapshots {
  static final String CONTENTS = ImportedSnapshots.CONTENTS;
  static final String STORAGE_NODES = "/apis/soko.dev/v1alpha1/storagenodes/";
  static final String VOLUMES = "/api/v1/persistentvolumes";
  static final String LABELLED = "labelSelector=" + encode(SnapshotContent.MANAGED_BY);
  static final int PAGE = 500;
  static final int MAX_PAGE_CHARS = 8 << 20;
  static final int MAX_OBJECT_CHARS = 4 << 20;

  /** How the node that holds a snapshot describes it, asked at its data endpoint. */
  @FunctionalInterface
  public interface Describer {
    /**
     * The snapshot as {@code node} describes it; empty when that node answers it does not hold it.
     * Throws a StorageException UNAVAILABLE naming the node and endpoint when it cannot be reached.
     */
    Optional<RemoteSnapshot> describe(String node, String endpoint, String snapshotId);
  }

  /** How the node that holds a volume describes it, asked at its data endpoint. */
  @FunctionalInterface
  public interface VolumeDescriber {
    /** As {@link Describer#describe}, for a volume. */
    Optional<RemoteSnapshot> describe(String node, String endpoint, String volumeId);
  }

  /** Where a snapshot lives: its node and the data endpoint that node's StorageNode names. */
  public record Home(String node, String endpoint) {}

  /** Describes nothing: for a lookup that only asks {@link #homeOf}. */
  private static final Describer NO_DESCRIBER =
      (node, endpoint, snapshotId) -> {
        throw new IllegalStateException("a lookup of homes only describes no snapshot");
      };

  /** Describes no volume: a lookup without it finds volumes only on their own nodes. */
  private static final VolumeDescriber NO_VOLUMES = (node, endpoint, volumeId) -> Optional.empty();

  private final KubeApi api;
  private final String driver;
  private final String thisNode;
  private final String storageCluster;
  private final Describer describer;
  private final VolumeDescriber volumeDescriber;

  /**
   * @param driver this driver's name: only its contents are looked at
   * @param thisNode this node's name (its label value): a snapshot labelled so is this catalog's
   * @param storageCluster the StorageCluster whose StorageNodes name the nodes' data endpoints
   */
  public SnapshotHomes(
      KubeApi api, String driver, String thisNode, String storageCluster, Describer describer) {
    this(api, driver, thisNode, storageCluster, describer, NO_VOLUMES);
  }

  /**
   * As {@link #SnapshotHomes(KubeApi, String, String, String, Describer)}, finding volumes too
   * (clones across nodes), described by {@code volumeDescriber}.
   */
  public SnapshotHomes(
      KubeApi api,
      String driver,
      String thisNode,
      String storageCluster,
      Describer describer,
      VolumeDescriber volumeDescriber) {
    this.volumeDescriber = volumeDescriber;
    this.api = api;
    this.driver = driver;
    this.thisNode = thisNode;
    this.storageCluster = storageCluster;
    this.describer = describer;
  }

  /**
   * A lookup of where snapshots live, for a caller on no node (the controller's relay of block
   * metadata): {@link #homeOf} only.
   */
  public static SnapshotHomes lookup(KubeApi api, String driver, String storageCluster) {
    return new SnapshotHomes(api, driver, "", storageCluster, NO_DESCRIBER);
  }

  @Override
  public Optional<RemoteSnapshot> find(String snapshotId) {
    Optional<String> node = nodeOf(snapshotId);
    if (node.isEmpty() || node.get().equals(thisNode)) {
      // This node's own snapshot would have been in its catalog: it is gone, not elsewhere.
      return Optional.empty();
    }
    Home home = homeOn("snapshot " + snapshotId, node.get());
    return describer.describe(home.node(), home.endpoint(), snapshotId);
  }

  /**
   * The node that holds {@code snapshotId} and its data endpoint; empty when no content of this
   * driver names the snapshot with a node. UNAVAILABLE, saying why, when that node is gone or
   * serves no data path.
   */
  public Optional<Home> homeOf(String snapshotId) {
    return nodeOf(snapshotId).map(node -> homeOn("snapshot " + snapshotId, node));
  }

  /**
   * The volume as the node its PersistentVolume names describes it; empty when no PersistentVolume
   * of this driver names the volume with a node, or names this node (whose catalog would have held
   * it). UNAVAILABLE, saying why, when that node is gone or serves no data path.
   */
  @Override
  public Optional<RemoteSnapshot> findVolume(String volumeId) {
    Optional<String> node = nodeOfVolume(volumeId);
    if (node.isEmpty() || node.get().equals(thisNode)) {
      return Optional.empty();
    }
    Home home = homeOn("volume " + volumeId, node.get());
    return volumeDescriber.describe(home.node(), home.endpoint(), volumeId);
  }

  /**
   * The node the node affinity of the PersistentVolume of this driver whose handle is {@code
   * volumeId} names (the topology key {@link Topology#NODE_KEY}, one value); empty when none does.
   */
  Optional<String> nodeOfVolume(String volumeId) {
    String what = "volume " + volumeId;
    String next = "";
    do {
      String path =
          VOLUMES + "?limit=" + PAGE + (next.isEmpty() ? "" : "&continue=" + encode(next));
      Object page = read(path, MAX_PAGE_CHARS, "list the PersistentVolumes", what);
      if (JsonParser.at(page, "items") instanceof List<?> items) {
        for (Object pv : items) {
          if (driver.equals(text(JsonParser.at(pv, "spec", "csi", "driver")))
              && volumeId.equals(text(JsonParser.at(pv, "spec", "csi", "volumeHandle")))) {
            String node = affinityNode(pv);
            return node.isEmpty() ? Optional.empty() : Optional.of(node);
          }
        }
      }
      next = text(JsonParser.at(page, "metadata", "continue"));
    } while (!next.isEmpty());
    return Optional.empty();
  }

  private static String affinityNode(Object pv) {
    if (!(JsonParser.at(pv, "spec", "nodeAffinity", "required", "nodeSelectorTerms")
        instanceof List<?> terms)) {
      return "";
    }
    for (Object term : terms) {
      if (JsonParser.at(term, "matchExpressions") instanceof List<?> expressions) {
        for (Object e : expressions) {
          if (Topology.NODE_KEY.equals(JsonParser.at(e, "key"))
              && "In".equals(JsonParser.at(e, "operator"))
              && JsonParser.at(e, "values") instanceof List<?> values
              && values.size() == 1) {
            return text(values.get(0)).strip();
          }
        }
      }
    }
    return "";
  }

  /** {@code what} ("snapshot X", "volume X") lives on {@code node}: its data endpoint. */
  private Home homeOn(String what, String node) {
    requireNode(what, node);
    return new Home(node, endpointOf(what, node));
  }

  /** The node the label of the content naming {@code snapshotId} gives; empty when none does. */
  Optional<String> nodeOf(String snapshotId) {
    String next = "";
    do {
      String path =
          CONTENTS
              + "?"
              + LABELLED
              + "&limit="
              + PAGE
              + (next.isEmpty() ? "" : "&continue=" + encode(next));
      Object page =
          read(path, MAX_PAGE_CHARS, "list the VolumeSnapshotContents", "snapshot " + snapshotId);
      if (JsonParser.at(page, "items") instanceof List<?> items) {
        for (Object item : items) {
          Optional<String> node = labelledNode(item, snapshotId);
          if (node.isPresent()) {
            return node;
          }
        }
      }
      next = text(JsonParser.at(page, "metadata", "continue"));
    } while (!next.isEmpty());
    return Optional.empty();
  }

  /** The node of a content of this driver whose snapshot is {@code snapshotId}, if it is one. */
  private Optional<String> labelledNode(Object content, String snapshotId) {
    if (!driver.equals(text(JsonParser.at(content, "spec", "driver")))) {
      return Optional.empty();
    }
    boolean names =
        snapshotId.equals(text(JsonParser.at(content, "status", "snapshotHandle")))
            || snapshotId.equals(text(JsonParser.at(content, "spec", "source", "snapshotHandle")));
    String node =
        text(JsonParser.at(content, "metadata", "labels", SnapshotContent.MANAGED_BY)).strip();
    return names && !node.isEmpty() ? Optional.of(node) : Optional.empty();
  }

  /** Fails with the plain reason when {@code node}'s Node object no longer exists. */
  private void requireNode(String what, String node) {
    KubeApi.Response response = get("/api/v1/nodes/" + encode(node), "read Node " + node, what);
    if (response.status() == 404) {
      throw unavailable(
          "%s is on node %s, which is gone (its Node object no longer exists); its data cannot be"
              + " copied",
          what, node);
    }
    if (!response.ok()) {
      throw unavailable(
          "cannot tell whether node %s, which holds %s, exists: reading its Node answered HTTP %d:"
              + " %s",
          node, what, response.status(), cut(response.body()));
    }
  }

  /** The data endpoint {@code node}'s StorageNode advertises; fails when it has none. */
  private String endpointOf(String what, String node) {
    String report = storageCluster + "." + node;
    KubeApi.Response response =
        get(STORAGE_NODES + encode(report), "read StorageNode " + report, what);
    String endpoint = "";
    if (response.ok()) {
      endpoint = field(parse(response.body(), "StorageNode " + report, what), "dataEndpoint");
    } else if (response.status() != 404) {
      throw unavailable(
          "cannot find the data endpoint of node %s, which holds %s: reading StorageNode %s"
              + " answered HTTP %d: %s",
          node, what, report, response.status(), cut(response.body()));
    }
    if (endpoint.isEmpty()) {
      throw unavailable(
          "%s is on node %s, but node %s's driver does not serve the data path (StorageNode %s"
              + " %s); its data cannot be copied",
          what, node, node, report, response.ok() ? "has no dataEndpoint" : "does not exist");
    }
    return endpoint;
  }

  private static String field(Object object, String name) {
    return JsonParser.at(object, name) instanceof String s ? s.strip() : "";
  }

  // In the helpers below, {@code doing} is the request ("read Node N") and {@code what} the
  // snapshot or volume looked for ("snapshot X").

  private Object read(String path, int maxChars, String doing, String what) {
    KubeApi.Response response = get(path, maxChars, doing, what);
    if (!response.ok()) {
      throw unavailable(
          "cannot find which node holds %s: could not %s (HTTP %d: %s)",
          what, doing, response.status(), cut(response.body()));
    }
    return parse(response.body(), doing, what);
  }

  private KubeApi.Response get(String path, String doing, String what) {
    return get(path, MAX_OBJECT_CHARS, doing, what);
  }

  private KubeApi.Response get(String path, int maxChars, String doing, String what) {
    try {
      return api.get(path, maxChars);
    } catch (IOException e) {
      throw unavailable(
          "cannot find which node holds %s: could not %s: %s", what, doing, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(
          StorageException.Reason.ABORTED, "interrupted while finding which node holds " + what);
    }
  }

  private static Object parse(String body, String doing, String what) {
    try {
      return JsonParser.parse(body);
    } catch (IllegalArgumentException e) {
      throw unavailable(
          "cannot find which node holds %s: the answer to %s is not JSON: %s",
          what, doing, e.getMessage());
    }
  }

  private static StorageException unavailable(String format, Object... args) {
    return new StorageException(StorageException.Reason.UNAVAILABLE, String.format(format, args));
  }
}

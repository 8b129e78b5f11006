package dev.soko.driver.report;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

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
 */
public final class SnapshotHomes implements RemoteSnapshots {
  static final String CONTENTS = ImportedSnapshots.CONTENTS;
  static final String STORAGE_NODES = "/apis/soko.dev/v1alpha1/storagenodes/";
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

  /** Where a snapshot lives: its node and the data endpoint that node's StorageNode names. */
  public record Home(String node, String endpoint) {}

  /** Describes nothing: for a lookup that only asks {@link #homeOf}. */
  private static final Describer NO_DESCRIBER =
      (node, endpoint, snapshotId) -> {
        throw new IllegalStateException("a lookup of homes only describes no snapshot");
      };

  private final KubeApi api;
  private final String driver;
  private final String thisNode;
  private final String storageCluster;
  private final Describer describer;

  /**
   * @param driver this driver's name: only its contents are looked at
   * @param thisNode this node's name (its label value): a snapshot labelled so is this catalog's
   * @param storageCluster the StorageCluster whose StorageNodes name the nodes' data endpoints
   */
  public SnapshotHomes(
      KubeApi api, String driver, String thisNode, String storageCluster, Describer describer) {
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
    Home home = homeOn(snapshotId, node.get());
    return describer.describe(home.node(), home.endpoint(), snapshotId);
  }

  /**
   * The node that holds {@code snapshotId} and its data endpoint; empty when no content of this
   * driver names the snapshot with a node. UNAVAILABLE, saying why, when that node is gone or
   * serves no data path.
   */
  public Optional<Home> homeOf(String snapshotId) {
    return nodeOf(snapshotId).map(node -> homeOn(snapshotId, node));
  }

  private Home homeOn(String snapshotId, String node) {
    requireNode(snapshotId, node);
    return new Home(node, endpointOf(snapshotId, node));
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
      Object page = read(path, MAX_PAGE_CHARS, "list the VolumeSnapshotContents", snapshotId);
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
  private void requireNode(String snapshotId, String node) {
    KubeApi.Response response =
        get("/api/v1/nodes/" + encode(node), "read Node " + node, snapshotId);
    if (response.status() == 404) {
      throw unavailable(
          "snapshot %s is on node %s, which is gone (its Node object no longer exists); its data"
              + " cannot be copied",
          snapshotId, node);
    }
    if (!response.ok()) {
      throw unavailable(
          "cannot tell whether node %s, which holds snapshot %s, exists: reading its Node answered"
              + " HTTP %d: %s",
          node, snapshotId, response.status(), cut(response.body()));
    }
  }

  /** The data endpoint {@code node}'s StorageNode advertises; fails when it has none. */
  private String endpointOf(String snapshotId, String node) {
    String report = storageCluster + "." + node;
    KubeApi.Response response =
        get(STORAGE_NODES + encode(report), "read StorageNode " + report, snapshotId);
    String endpoint = "";
    if (response.ok()) {
      endpoint = field(parse(response.body(), "StorageNode " + report, snapshotId), "dataEndpoint");
    } else if (response.status() != 404) {
      throw unavailable(
          "cannot find the data endpoint of node %s, which holds snapshot %s: reading StorageNode"
              + " %s answered HTTP %d: %s",
          node, snapshotId, report, response.status(), cut(response.body()));
    }
    if (endpoint.isEmpty()) {
      throw unavailable(
          "snapshot %s is on node %s, but node %s's driver does not serve the data path"
              + " (StorageNode %s %s); its data cannot be copied",
          snapshotId, node, node, report, response.ok() ? "has no dataEndpoint" : "does not exist");
    }
    return endpoint;
  }

  private static String field(Object object, String name) {
    return JsonParser.at(object, name) instanceof String s ? s.strip() : "";
  }

  private Object read(String path, int maxChars, String what, String snapshotId) {
    KubeApi.Response response = get(path, maxChars, what, snapshotId);
    if (!response.ok()) {
      throw unavailable(
          "cannot find which node holds snapshot %s: could not %s (HTTP %d: %s)",
          snapshotId, what, response.status(), cut(response.body()));
    }
    return parse(response.body(), what, snapshotId);
  }

  private KubeApi.Response get(String path, String what, String snapshotId) {
    return get(path, MAX_OBJECT_CHARS, what, snapshotId);
  }

  private KubeApi.Response get(String path, int maxChars, String what, String snapshotId) {
    try {
      return api.get(path, maxChars);
    } catch (IOException e) {
      throw unavailable(
          "cannot find which node holds snapshot %s: could not %s: %s",
          snapshotId, what, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(
          StorageException.Reason.ABORTED,
          "interrupted while finding which node holds snapshot " + snapshotId);
    }
  }

  private static Object parse(String body, String what, String snapshotId) {
    try {
      return JsonParser.parse(body);
    } catch (IllegalArgumentException e) {
      throw unavailable(
          "cannot find which node holds snapshot %s: the answer to %s is not JSON: %s",
          snapshotId, what, e.getMessage());
    }
  }

  private static StorageException unavailable(String format, Object... args) {
    return new StorageException(StorageException.Reason.UNAVAILABLE, String.format(format, args));
  }
}

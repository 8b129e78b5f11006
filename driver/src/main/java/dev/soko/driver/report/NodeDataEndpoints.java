package dev.soko.driver.report;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;

/**
 * The data endpoint of a node, for the controller's group snapshots across nodes: the node's Node
 * must still exist, and its StorageNode ({@code <storagecluster>.<node>}) names the endpoint, as
 * for a restore ({@link SnapshotHomes}). Every failure is UNAVAILABLE naming the node and why.
 */
public final class NodeDataEndpoints {
  private final KubeApi api;
  private final String storageCluster;

  public NodeDataEndpoints(KubeApi api, String storageCluster) {
    this.api = api;
    this.storageCluster = storageCluster;
  }

  /** {@code node}'s data endpoint ({@code host:port}). */
  public String of(String node) {
    KubeApi.Response found = get("/api/v1/nodes/" + encode(node), node, "its Node");
    if (found.status() == 404) {
      throw unavailable("node %s is gone (its Node object no longer exists)", node);
    }
    if (!found.ok()) {
      throw unavailable(
          "cannot tell whether node %s exists: reading its Node answered HTTP %d: %s",
          node, found.status(), cut(found.body()));
    }
    String report = storageCluster + "." + node;
    KubeApi.Response storageNode =
        get(SnapshotHomes.STORAGE_NODES + encode(report), node, "StorageNode " + report);
    String endpoint = "";
    if (storageNode.ok()) {
      try {
        endpoint =
            JsonParser.at(JsonParser.parse(storageNode.body()), "dataEndpoint") instanceof String s
                ? s.strip()
                : "";
      } catch (IllegalArgumentException e) {
        throw unavailable("StorageNode %s is not JSON: %s", report, e.getMessage());
      }
    } else if (storageNode.status() != 404) {
      throw unavailable(
          "cannot read StorageNode %s of node %s: HTTP %d: %s",
          report, node, storageNode.status(), cut(storageNode.body()));
    }
    if (endpoint.isEmpty()) {
      throw unavailable(
          "node %s's driver does not serve the data path (StorageNode %s %s)",
          node, report, storageNode.ok() ? "has no dataEndpoint" : "does not exist");
    }
    return endpoint;
  }

  private KubeApi.Response get(String path, String node, String what) {
    try {
      return api.get(path, SnapshotHomes.MAX_OBJECT_CHARS);
    } catch (IOException e) {
      throw unavailable("cannot read %s of node %s: %s", what, node, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(StorageException.Reason.ABORTED, "interrupted");
    }
  }

  private static StorageException unavailable(String format, Object... args) {
    return new StorageException(StorageException.Reason.UNAVAILABLE, String.format(format, args));
  }
}

package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The controller's side: writes the request for a volume's owning node with server-side apply (so a
 * retried call with the same parameters changes nothing and keeps its generation, and a call with
 * new ones supersedes the old spec) and waits, up to a bound, for the node's status to acknowledge
 * that generation. It keeps nothing between calls: a restarted controller finds the request, and
 * its status, where the last one left it.
 */
public final class NodeRequestClient {
  static final Duration WAIT = Duration.ofSeconds(15);
  private static final long FIRST_POLL_MILLIS = 50;
  private static final long MAX_POLL_MILLIS = 1000;

  /** What the call answers: done, refused by the node (with why), or not yet (with why). */
  public record Answer(Kind kind, String message) {
    public enum Kind {
      APPLIED,
      REFUSED,
      PENDING
    }

    static Answer pending(String why) {
      return new Answer(Kind.PENDING, why);
    }
  }

  private final KubeApi api;
  private final String namespace;
  private final Duration wait;

  public NodeRequestClient(KubeApi api, String namespace) {
    this(api, namespace, WAIT);
  }

  /**
   * @param wait how long one call waits for the node before answering {@link Answer.Kind#PENDING}
   */
  public NodeRequestClient(KubeApi api, String namespace, Duration wait) {
    this.api = api;
    this.namespace = namespace;
    this.wait = wait;
  }

  /** Asks {@code owner}'s node to carry out {@code operation} on the volume, and waits. */
  public Answer request(
      VolumeOwners.Owner owner, String volumeId, String operation, Map<String, String> parameters)
      throws InterruptedException {
    String name = NodeRequests.name(operation, volumeId);
    Object written;
    try {
      KubeApi.Response response =
          api.write(
              "PATCH",
              NodeRequests.collection(namespace)
                  + "/"
                  + encode(name)
                  + "?fieldManager="
                  + NodeRequests.CONTROLLER_MANAGER
                  + "&force=true",
              NodeRequests.APPLY,
              Json.write(body(name, owner, volumeId, operation, parameters)),
              NodeRequests.MAX_OBJECT_CHARS);
      if (!response.ok()) {
        return Answer.pending(
            "NodeRequest "
                + name
                + " could not be written: HTTP "
                + response.status()
                + " "
                + cut(response.body()));
      }
      written = JsonParser.parse(response.body());
    } catch (IOException | IllegalArgumentException e) {
      return Answer.pending("NodeRequest " + name + " could not be written: " + e.getMessage());
    }
    Object generation = JsonParser.at(written, "metadata", "generation");
    if (!(generation instanceof Number g)) {
      return Answer.pending("NodeRequest " + name + " has no generation");
    }
    return await(name, owner.node(), g.longValue(), written);
  }

  private Map<String, Object> body(
      String name,
      VolumeOwners.Owner owner,
      String volumeId,
      String operation,
      Map<String, String> parameters) {
    return Json.object(
        "apiVersion",
        NodeRequests.API_VERSION,
        "kind",
        NodeRequests.KIND,
        "metadata",
        Json.object(
            "name",
            name,
            "namespace",
            namespace,
            "labels",
            Map.of(NodeRequests.LABEL_NODE, owner.node()),
            // Deleted with the volume's PV (garbage collection, background).
            "ownerReferences",
            List.of(
                Json.object(
                    "apiVersion",
                    "v1",
                    "kind",
                    "PersistentVolume",
                    "name",
                    owner.pvName(),
                    "uid",
                    owner.pvUid()))),
        "spec",
        Json.object(
            "node",
            owner.node(),
            "volumeId",
            volumeId,
            "operation",
            operation,
            // Sorted, so the same parameters always give the same object.
            "parameters",
            new TreeMap<>(parameters)));
  }

  /**
   * Polls the request's status until it answers generation {@code generation}, up to the wait. A
   * Failed status is not an answer: the node tries again, so the call waits on, and says why only
   * when the wait is over.
   */
  private Answer await(String name, String node, long generation, Object object)
      throws InterruptedException {
    long deadline = System.nanoTime() + wait.toNanos();
    long pause = FIRST_POLL_MILLIS;
    String path = NodeRequests.collection(namespace) + "/" + encode(name);
    String failure = "";
    while (true) {
      Object observed = JsonParser.at(object, "status", "observedGeneration");
      if (observed instanceof Number n && n.longValue() == generation) {
        String phase = text(JsonParser.at(object, "status", "phase"));
        String message = text(JsonParser.at(object, "status", "message"));
        if (NodeRequests.APPLIED.equals(phase)) {
          return new Answer(Answer.Kind.APPLIED, "");
        }
        if (NodeRequests.REFUSED.equals(phase)) {
          return new Answer(Answer.Kind.REFUSED, "node " + node + " refused: " + message);
        }
        failure = message;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0 && !failure.isEmpty()) {
        return Answer.pending("node " + node + " could not apply it yet: " + failure);
      }
      if (left <= 0) {
        return Answer.pending(
            "node "
                + node
                + " has not applied NodeRequest "
                + name
                + " (generation "
                + generation
                + ") yet: is its driver running?");
      }
      Thread.sleep(Math.min(pause, Math.max(1, left / 1_000_000)));
      pause = Math.min(MAX_POLL_MILLIS, pause * 2);
      try {
        KubeApi.Response response = api.get(path, NodeRequests.MAX_OBJECT_CHARS);
        if (response.status() == 404) {
          return Answer.pending("NodeRequest " + name + " was deleted while waiting");
        }
        if (response.ok()) {
          object = JsonParser.parse(response.body());
        }
      } catch (IOException | IllegalArgumentException e) {
        // the next poll tries again until the deadline
      }
    }
  }
}

package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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

  /**
   * What the call answers: done (with the request's status, which carries what the node answers),
   * refused by the node (with why), or not yet (with why).
   */
  public record Answer(Kind kind, String message, Object status) {
    public enum Kind {
      APPLIED,
      REFUSED,
      PENDING
    }

    Answer(Kind kind, String message) {
      this(kind, message, null);
    }

    static Answer pending(String why) {
      return new Answer(Kind.PENDING, why);
    }
  }

  /**
   * One request as the controller writes it.
   *
   * @param operation what the node is to do
   * @param key what the request is about (a volume id, a CSI name, a snapshot id): one request per
   *     operation and key
   * @param node the node to do it
   * @param owner the PersistentVolume the request goes with, or null for none
   * @param fields the spec's fields beyond node and operation
   * @param labels labels beyond the node's
   */
  public record Ask(
      String operation,
      String key,
      String node,
      VolumeOwners.Owner owner,
      Map<String, Object> fields,
      Map<String, String> labels) {}

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
    return ask(
        new Ask(
            operation,
            volumeId,
            owner.node(),
            owner,
            // Sorted, so the same parameters always give the same object.
            Json.object("volumeId", volumeId, "parameters", new TreeMap<>(parameters)),
            Map.of()));
  }

  /** Writes the request and waits for the node's answer. */
  public Answer ask(Ask ask) throws InterruptedException {
    String name = NodeRequests.name(ask.operation(), ask.key());
    Object written;
    try {
      KubeApi.Response response =
          api.write(
              "PATCH",
              path(name) + "?fieldManager=" + NodeRequests.CONTROLLER_MANAGER + "&force=true",
              NodeRequests.APPLY,
              Json.write(body(name, ask)),
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
    return await(name, ask.node(), g.longValue(), written);
  }

  /**
   * Deletes the request of {@code operation} and {@code key} once its answer is used: true when it
   * is gone (or was never there), false when the API server could not be asked.
   */
  public boolean forget(String operation, String key) throws InterruptedException {
    try {
      int status =
          api.send("DELETE", path(NodeRequests.name(operation, key)), "application/json", "")
              .status();
      return status / 100 == 2 || status == 404;
    } catch (IOException e) {
      return false;
    }
  }

  /** The requests whose labels match {@code selector}; empty when they cannot be listed. */
  public Optional<List<?>> list(String selector) throws InterruptedException {
    try {
      KubeApi.Response response =
          api.get(
              NodeRequests.collection(namespace) + "?labelSelector=" + encode(selector),
              NodeRequests.MAX_OBJECT_CHARS);
      if (response.ok()
          && JsonParser.at(JsonParser.parse(response.body()), "items") instanceof List<?> items) {
        return Optional.of(items);
      }
    } catch (IOException | IllegalArgumentException e) {
      // unknown: the caller answers retryably
    }
    return Optional.empty();
  }

  private String path(String name) {
    return NodeRequests.collection(namespace) + "/" + encode(name);
  }

  private Map<String, Object> body(String name, Ask ask) {
    Map<String, Object> labels = new TreeMap<>(ask.labels());
    labels.put(NodeRequests.LABEL_NODE, ask.node());
    Map<String, Object> metadata =
        Json.object("name", name, "namespace", namespace, "labels", labels);
    if (ask.owner() != null) {
      // Deleted with the volume's PV (garbage collection, background).
      metadata.put(
          "ownerReferences",
          List.of(
              Json.object(
                  "apiVersion",
                  "v1",
                  "kind",
                  "PersistentVolume",
                  "name",
                  ask.owner().pvName(),
                  "uid",
                  ask.owner().pvUid())));
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("node", ask.node());
    spec.put("operation", ask.operation());
    spec.putAll(ask.fields());
    return Json.object(
        "apiVersion",
        NodeRequests.API_VERSION,
        "kind",
        NodeRequests.KIND,
        "metadata",
        metadata,
        "spec",
        spec);
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
          return new Answer(Answer.Kind.APPLIED, "", JsonParser.at(object, "status"));
        }
        if (NodeRequests.REFUSED.equals(phase)) {
          return new Answer(
              Answer.Kind.REFUSED,
              "node " + node + " refused: " + message,
              JsonParser.at(object, "status"));
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

package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's side: lists and watches the NodeRequests labelled with this node (never another
 * node's), hands each generation not yet acknowledged to the {@link NodeRequestHandler}, in order,
 * on one thread, and writes the outcome to the request's status with server-side apply (the node
 * plugin may write the status subresource only). A request the handler could not carry out ({@link
 * NodeRequestHandler.Outcome#failed}) is handed over again after {@code retry}, with the newest
 * spec seen by then. After a restart the list finds every request again; those whose status already
 * acknowledges their generation are not handed over, so nothing is done twice.
 */
public final class NodeRequestWatch implements AutoCloseable, Reflector.Source {
  private static final Logger LOG = LoggerFactory.getLogger(NodeRequestWatch.class);
  static final Duration MIN_WATCH = Duration.ofMinutes(5);
  static final Duration RETRY = Duration.ofSeconds(10);
  static final int MAX_LIST_CHARS = 16 << 20;

  private final KubeApi api;
  private final String namespace;
  private final String node;
  private final NodeRequestHandler handler;
  private final Reflector reflector;
  private final Duration retry;

  // Both touched on the reflector's worker only.
  /** The newest object seen per request not yet acknowledged, by name. */
  private final Map<String, Object> latest = new HashMap<>();

  /**
   * The generation whose last outcome was Failed, by name: retried {@code retry} after it failed,
   * not by the watch event of its own status write (which would retry at once, without end) nor by
   * the timer.
   */
  private final Map<String, Long> failed = new HashMap<>();

  public NodeRequestWatch(KubeApi api, String namespace, String node, NodeRequestHandler handler) {
    this(api, namespace, node, handler, MIN_WATCH, RETRY);
  }

  NodeRequestWatch(
      KubeApi api,
      String namespace,
      String node,
      NodeRequestHandler handler,
      Duration minWatch,
      Duration retry) {
    this.api = api;
    this.namespace = namespace;
    this.node = node;
    this.handler = handler;
    this.retry = retry;
    this.reflector = new Reflector(api, "node-requests", "watching NodeRequests", minWatch);
    reflector.source(this);
  }

  /** Lists and watches on daemon threads until {@link #close}. */
  public void start() {
    LOG.atInfo()
        .addKeyValue("namespace", namespace)
        .addKeyValue("node", node)
        .log("carrying out this node's NodeRequests");
    reflector.start();
    // Requests whose answer could not be written: handed over again (the handler is idempotent).
    reflector.every(retry, () -> List.copyOf(latest.values()).forEach(this::consider));
  }

  private String selector() {
    return "labelSelector=" + encode(NodeRequests.LABEL_NODE + "=" + node);
  }

  @Override
  public Optional<String> read() throws InterruptedException {
    KubeApi.Response response;
    try {
      response = api.get(NodeRequests.collection(namespace) + "?" + selector(), MAX_LIST_CHARS);
    } catch (IOException e) {
      reflector.failed("listing NodeRequests " + e.getClass().getSimpleName(), e.toString());
      return Optional.empty();
    }
    if (!response.ok()) {
      reflector.failed("listing NodeRequests HTTP " + response.status(), cut(response.body()));
      return Optional.empty();
    }
    Object list;
    try {
      list = JsonParser.parse(response.body());
    } catch (IllegalArgumentException e) {
      reflector.failed("listing NodeRequests body", e.getMessage());
      return Optional.empty();
    }
    reflector.succeeded("listing NodeRequests");
    if (JsonParser.at(list, "items") instanceof List<?> items) {
      reflector.apply(
          () -> {
            latest.clear();
            items.forEach(this::consider);
          });
    }
    String version = text(JsonParser.at(list, "metadata", "resourceVersion"));
    return version.isEmpty() ? Optional.empty() : Optional.of(version);
  }

  @Override
  public String watchPath() {
    return NodeRequests.collection(namespace) + "?" + selector();
  }

  @Override
  public void event(String type, Object object) {
    if ("ADDED".equals(type) || "MODIFIED".equals(type)) {
      reflector.apply(() -> consider(object));
    } else if ("DELETED".equals(type)) {
      String name = text(JsonParser.at(object, "metadata", "name"));
      reflector.apply(
          () -> {
            latest.remove(name);
            failed.remove(name);
          });
    }
  }

  private void consider(Object object) {
    take(object, false);
  }

  /** On the worker: the failed generation of that request again, unless something newer came. */
  private void retryFailed(String name, long generation) {
    Long failedGeneration = failed.get(name);
    Object object = latest.get(name);
    if (failedGeneration != null && failedGeneration == generation && object != null) {
      take(object, true);
    }
  }

  /**
   * On the worker: hands the request over unless its generation is acknowledged already, or failed
   * and this is not its retry.
   */
  private void take(Object object, boolean retrying) {
    Optional<NodeRequest> parsed = parse(object);
    if (parsed.isEmpty()) {
      return;
    }
    NodeRequest request = parsed.get();
    latest.put(request.name(), object);
    if (acknowledged(object, request.generation())) {
      latest.remove(request.name());
      failed.remove(request.name());
      return;
    }
    Long failedGeneration = failed.get(request.name());
    if (!retrying && failedGeneration != null && failedGeneration == request.generation()) {
      return;
    }
    NodeRequestHandler.Outcome outcome;
    try {
      outcome = handler.handle(request);
    } catch (RuntimeException e) {
      LOG.warn("NodeRequest {} failed: {}", request.name(), e.toString());
      outcome = NodeRequestHandler.Outcome.failed("the node's driver failed: " + e.getMessage());
    }
    if (outcome.isFailed()) {
      failed.put(request.name(), request.generation());
      reflector.after(retry, () -> retryFailed(request.name(), request.generation()));
    } else {
      failed.remove(request.name());
    }
    if (writeStatus(request, outcome) && !outcome.isFailed()) {
      // Acknowledged: the MODIFIED event of this write finds it so and changes nothing.
      latest.remove(request.name());
    }
  }

  private static boolean acknowledged(Object object, long generation) {
    Object observed = JsonParser.at(object, "status", "observedGeneration");
    String phase = text(JsonParser.at(object, "status", "phase"));
    return observed instanceof Number n
        && n.longValue() == generation
        && !NodeRequests.FAILED.equals(phase);
  }

  private Optional<NodeRequest> parse(Object object) {
    String name = text(JsonParser.at(object, "metadata", "name"));
    Object generation = JsonParser.at(object, "metadata", "generation");
    String requestNode = text(JsonParser.at(object, "spec", "node"));
    if (name.isEmpty() || !(generation instanceof Number g) || !node.equals(requestNode)) {
      return Optional.empty(); // not ours (the label was changed by hand) or not a request
    }
    Map<String, String> parameters = new LinkedHashMap<>();
    if (JsonParser.at(object, "spec", "parameters") instanceof Map<?, ?> map) {
      map.forEach((k, v) -> parameters.put(String.valueOf(k), String.valueOf(v)));
    }
    return Optional.of(
        new NodeRequest(
            name,
            g.longValue(),
            text(JsonParser.at(object, "spec", "volumeId")),
            text(JsonParser.at(object, "spec", "operation")),
            parameters,
            new NodeRequest.Arguments(
                text(JsonParser.at(object, "spec", "name")),
                texts(JsonParser.at(object, "spec", "volumeIds")),
                text(JsonParser.at(object, "spec", "groupSnapshotId")),
                texts(JsonParser.at(object, "spec", "snapshotIds")))));
  }

  private static List<String> texts(Object list) {
    return list instanceof List<?> items ? items.stream().map(Reflector::text).toList() : List.of();
  }

  /** Server-side apply of the status alone; false when it could not be written (retried). */
  private boolean writeStatus(NodeRequest request, NodeRequestHandler.Outcome outcome) {
    Map<String, Object> status = new LinkedHashMap<>();
    status.put("observedGeneration", request.generation());
    status.put("phase", outcome.phase());
    if (outcome.message() != null) {
      status.put("message", cut(outcome.message()));
    }
    status.putAll(outcome.result());
    String body =
        Json.write(
            Json.object(
                "apiVersion",
                NodeRequests.API_VERSION,
                "kind",
                NodeRequests.KIND,
                "metadata",
                Json.object("name", request.name(), "namespace", namespace),
                "status",
                status));
    String path =
        NodeRequests.collection(namespace)
            + "/"
            + encode(request.name())
            + "/status?fieldManager="
            + NodeRequests.NODE_MANAGER
            + "&force=true";
    try {
      KubeApi.Response response = api.send("PATCH", path, NodeRequests.APPLY, body);
      if (response.ok()) {
        reflector.succeeded("writing NodeRequest status");
        LOG.atInfo()
            .addKeyValue("request", request.name())
            .addKeyValue("generation", request.generation())
            .addKeyValue("phase", outcome.phase())
            .log("NodeRequest answered");
        return true;
      }
      if (response.status() == 404) {
        latest.remove(request.name()); // deleted meanwhile: nobody waits for it
        return false;
      }
      reflector.failed(
          "writing NodeRequest status HTTP " + response.status(), cut(response.body()));
    } catch (IOException e) {
      reflector.failed("writing NodeRequest status " + e.getClass().getSimpleName(), e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return false;
  }

  /** Waits until what was handed to the worker so far is done (for tests). */
  void settle() throws InterruptedException {
    reflector.settle();
  }

  @Override
  public void close() {
    reflector.close();
  }
}

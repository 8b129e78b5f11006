package dev.soko.driver.report;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import dev.soko.driver.pool.NodeLabels;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Keeps {@link NodeLabels} equal to this node's Node object: one GET, then a watch of that one Node
 * (field selector on its name, from the GET's resourceVersion, with bookmarks), renewed when the
 * server ends it (after 5 to 10 minutes, as client-go's reflector does) and started over from a GET
 * when the version is too old (410). The kubelet and kube-proxy watch their Node the same way, so
 * at 1,000 nodes this adds 1,000 watchers that each receive only their own Node's updates (a
 * kubelet status update every few minutes when nothing changes) and one GET per node per restart of
 * the watch: far below the 100 GETs a second that a 10-second poll would cost.
 *
 * <p>When the API server cannot be reached the last labels read stay in force: an outage changes no
 * pool's verdict. A deleted Node makes the labels unknown. The reading, watching, backing off and
 * logging are the {@link Reflector}'s; its worker hands the labels to {@link NodeLabels}, so that
 * the watchdog's interrupt never reaches the listeners (which open pools: an interrupt would close
 * their files).
 */
public final class NodeWatch implements AutoCloseable, Reflector.Source {
  static final int MAX_NODE_CHARS = 4 << 20;
  static final Duration MIN_WATCH = Duration.ofMinutes(5);

  private final KubeApi api;
  private final String node;
  private final NodeLabels labels;
  private final Reflector reflector;

  public NodeWatch(KubeApi api, String node, NodeLabels labels) {
    this(api, node, labels, MIN_WATCH);
  }

  /**
   * @param minWatch the shortest watch asked for; each asks for a random length up to twice it
   */
  NodeWatch(KubeApi api, String node, NodeLabels labels, Duration minWatch) {
    this.api = api;
    this.node = node;
    this.labels = labels;
    this.reflector = new Reflector(api, "node-labels", "watching Node", minWatch);
    reflector.source(this);
  }

  /**
   * Reads the Node once, now, so that the pools are judged on real labels from the start; false
   * when that failed (the watch then keeps trying).
   */
  public boolean readNow() {
    try {
      return reflector.readNow();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Watches the Node on a daemon thread until {@link #close}. */
  public void start() {
    reflector.start();
  }

  /** One GET of the Node; its version when its labels were taken. */
  @Override
  public Optional<String> read() throws InterruptedException {
    KubeApi.Response response;
    try {
      response = api.get("/api/v1/nodes/" + encode(node), MAX_NODE_CHARS);
    } catch (IOException e) {
      reflector.failed("reading Node " + e.getClass().getSimpleName(), e.toString());
      return Optional.empty();
    }
    if (response.status() == 404) {
      reflector.apply(() -> labels.unknown("Node " + node + " does not exist"));
      reflector.succeeded("reading Node");
      return Optional.empty();
    }
    if (!response.ok()) {
      reflector.failed("reading Node HTTP " + response.status(), cut(response.body()));
      return Optional.empty();
    }
    Object nodeObject;
    try {
      nodeObject = JsonParser.parse(response.body());
    } catch (IllegalArgumentException e) {
      reflector.failed("reading Node body", e.getMessage());
      return Optional.empty();
    }
    take(nodeObject);
    reflector.succeeded("reading Node");
    String version = text(JsonParser.at(nodeObject, "metadata", "resourceVersion"));
    return version.isEmpty() ? Optional.empty() : Optional.of(version);
  }

  @Override
  public String watchPath() {
    return "/api/v1/nodes?fieldSelector=" + encode("metadata.name=" + node);
  }

  @Override
  public void event(String type, Object object) {
    if ("ADDED".equals(type) || "MODIFIED".equals(type)) {
      take(object);
    } else if ("DELETED".equals(type)) {
      reflector.apply(() -> labels.unknown("Node " + node + " was deleted"));
    }
  }

  private void take(Object nodeObject) {
    Map<String, String> next = new LinkedHashMap<>();
    if (JsonParser.at(nodeObject, "metadata", "labels") instanceof Map<?, ?> map) {
      map.forEach((k, v) -> next.put(String.valueOf(k), String.valueOf(v)));
    }
    reflector.apply(() -> labels.set(next));
  }

  @Override
  public void close() {
    reflector.close();
  }
}

package dev.soko.driver.report;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.pool.NodeLabels;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * pool's verdict. A deleted Node makes the labels unknown. A silent connection (no line for longer
 * than the watch may last) is cut by a watchdog and the watch restarts. One daemon thread reads;
 * another guards it and hands the labels to {@link NodeLabels}, so that the watchdog's interrupt
 * never reaches the listeners (which open pools: an interrupt would close their files). Failures
 * are logged at warn once per kind, then at debug.
 */
public final class NodeWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeWatch.class);
  static final int MAX_NODE_CHARS = 4 << 20;
  static final Duration MIN_WATCH = Duration.ofMinutes(5);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  private final KubeApi api;
  private final String node;
  private final NodeLabels labels;
  private final Duration minWatch;
  private final ScheduledThreadPoolExecutor worker;
  private final Map<String, Boolean> warned = new LinkedHashMap<>();
  private volatile boolean running = true;
  private volatile Thread reader;
  private String resourceVersion;
  private boolean gone;

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
    this.minWatch = minWatch;
    this.worker =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "node-labels");
              t.setDaemon(true);
              return t;
            });
    worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  /**
   * Reads the Node once, now, so that the pools are judged on real labels from the start; false
   * when that failed (the watch then keeps trying).
   */
  public boolean readNow() {
    try {
      return read();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Watches the Node on a daemon thread until {@link #close}. */
  public void start() {
    Thread t = new Thread(this::run, "node-watch");
    t.setDaemon(true);
    reader = t;
    t.start();
  }

  private void run() {
    int failures = 0;
    while (running) {
      try {
        boolean ok = resourceVersion == null ? read() && resourceVersion != null : watch();
        failures = ok ? 0 : failures + 1;
      } catch (InterruptedException e) {
        if (!running) {
          return;
        }
        failures++;
      }
      if (failures > 0 && running) {
        try {
          long cap = Math.min(MAX_BACKOFF.toMillis(), 500L << Math.min(failures, 6));
          Thread.sleep(cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1));
        } catch (InterruptedException e) {
          if (!running) {
            return;
          }
        }
      }
    }
  }

  /** One GET of the Node; true when its labels were taken. */
  private boolean read() throws InterruptedException {
    KubeApi.Response response;
    try {
      response = api.get("/api/v1/nodes/" + encode(node), MAX_NODE_CHARS);
    } catch (IOException e) {
      failed("reading Node " + e.getClass().getSimpleName(), e.toString());
      return false;
    }
    if (response.status() == 404) {
      apply(() -> labels.unknown("Node " + node + " does not exist"));
      succeeded("reading Node");
      return false;
    }
    if (!response.ok()) {
      failed("reading Node HTTP " + response.status(), cut(response.body()));
      return false;
    }
    try {
      take(JsonParser.parse(response.body()));
    } catch (IllegalArgumentException e) {
      failed("reading Node body", e.getMessage());
      return false;
    }
    succeeded("reading Node");
    return true;
  }

  /** One watch, until the server ends it; false when it failed. */
  private boolean watch() throws InterruptedException {
    long seconds =
        minWatch.toSeconds() + ThreadLocalRandom.current().nextLong(minWatch.toSeconds() + 1);
    String path =
        "/api/v1/nodes?fieldSelector="
            + encode("metadata.name=" + node)
            + "&watch=true&allowWatchBookmarks=true&resourceVersion="
            + encode(resourceVersion)
            + "&timeoutSeconds="
            + seconds;
    Thread self = Thread.currentThread();
    // The server ends the watch after timeoutSeconds; a connection that died silently is cut.
    ScheduledFuture<?> guard = worker.schedule(self::interrupt, seconds + 30, TimeUnit.SECONDS);
    gone = false;
    long started = System.nanoTime();
    int status;
    try {
      status = api.stream(path, this::event);
    } catch (IOException e) {
      Thread.interrupted(); // the watchdog's interrupt, if it was that
      if (!running) {
        throw new InterruptedException();
      }
      failed("watching Node " + e.getClass().getSimpleName(), e.toString());
      return false;
    } finally {
      guard.cancel(false);
    }
    Thread.interrupted();
    if (status == 410 || gone) {
      resourceVersion = null; // too old: read the Node again
      return true;
    }
    if (status / 100 != 2) {
      failed("watching Node HTTP " + status, "");
      return false;
    }
    succeeded("watching Node");
    // A watch the server ends at once, again and again, must not spin: back off as on a failure.
    return System.nanoTime() - started >= TimeUnit.SECONDS.toNanos(1);
  }

  private void event(String line) {
    Object event;
    try {
      event = JsonParser.parse(line);
    } catch (IllegalArgumentException e) {
      failed("watch event", e.getMessage());
      return;
    }
    Object type = JsonParser.at(event, "type");
    Object object = JsonParser.at(event, "object");
    if ("ADDED".equals(type) || "MODIFIED".equals(type)) {
      take(object);
    } else if ("DELETED".equals(type)) {
      version(object);
      apply(() -> labels.unknown("Node " + node + " was deleted"));
    } else if ("BOOKMARK".equals(type)) {
      version(object);
    } else if ("ERROR".equals(type)) {
      Object code = JsonParser.at(object, "code");
      if (code instanceof Number n && n.intValue() == 410) {
        gone = true;
      } else {
        failed("watch error", cut(String.valueOf(JsonParser.at(object, "message"))));
      }
    }
  }

  private void take(Object nodeObject) {
    version(nodeObject);
    Map<String, String> next = new LinkedHashMap<>();
    if (JsonParser.at(nodeObject, "metadata", "labels") instanceof Map<?, ?> map) {
      map.forEach((k, v) -> next.put(String.valueOf(k), String.valueOf(v)));
    }
    apply(() -> labels.set(next));
  }

  /** Before {@link #start} (the first read) at once; then on the worker, in order. */
  private void apply(Runnable change) {
    if (reader == null) {
      change.run();
      return;
    }
    try {
      worker.execute(change);
    } catch (RejectedExecutionException e) {
      // closing: nobody needs the labels any more
    }
  }

  private void version(Object object) {
    if (JsonParser.at(object, "metadata", "resourceVersion") instanceof String rv) {
      resourceVersion = rv;
    }
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  private static String cut(String text) {
    return text.length() <= 256 ? text : text.substring(0, 255) + "…";
  }

  private synchronized void succeeded(String what) {
    if (warned.keySet().removeIf(kind -> kind.startsWith(what))) {
      LOG.info("{} works again", what);
    }
  }

  private synchronized void failed(String kind, String detail) {
    if (warned.put(kind, Boolean.TRUE) == null) {
      LOG.warn("node labels: {} failed (logged once; retried): {}", kind, detail);
    } else {
      LOG.debug("node labels: {} failed: {}", kind, detail);
    }
  }

  @Override
  public void close() {
    running = false;
    worker.shutdown();
    Thread t = reader;
    if (t != null) {
      t.interrupt();
    }
  }
}

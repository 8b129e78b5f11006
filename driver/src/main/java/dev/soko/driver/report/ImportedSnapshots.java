package dev.soko.driver.report;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.state.Ids;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands pre-provisioned VolumeSnapshotContents to this node's csi-snapshotter. With {@code
 * --node-deployment}, csi-snapshotter lists only the contents labelled {@value
 * SnapshotContent#MANAGED_BY}={@code <its node>}, and the snapshot-controller sets that label only
 * on the contents it creates for dynamic snapshots. A content a user creates from an existing
 * snapshot handle (a re-install, a backup tool restoring its catalog, a pre-provisioned snapshot)
 * has none, so no node would serve it: it would never become ready, and deleting it would hang.
 * Snapshot IDs do not name their node, but each node's catalog knows the snapshots it holds: this
 * class watches the unlabelled contents of this driver and labels those whose snapshot this node
 * holds with this node's name.
 *
 * <p>Why the node and not the operator: the catalog is the one authority on where a snapshot is.
 * The operator could only learn it if every StorageNode report listed every snapshot ID (reports
 * that grow with the snapshots, rewritten every minute by every node), and would then label from a
 * report up to a minute old. The cost here is small: the watch selects only contents without the
 * label, which are the imported ones until a node labels them (a dynamic content carries the label
 * from its creation), so at 1,000 nodes an import costs 1,000 small watch events and one PATCH, and
 * a start costs one LIST that finds (nearly) nothing. Other drivers' contents are skipped on
 * arrival: the API server serves no field selector on a custom resource's {@code spec.driver}.
 *
 * <p>One daemon thread reads: a LIST, then a watch from its resourceVersion with bookmarks, renewed
 * when the server ends it (after 5 to 10 minutes), and a new LIST when the version is too old
 * (410). Another keeps the unlabelled contents seen, labels those this node holds, looks at them
 * again every {@code recheck} (a pool mounted late brings its snapshots into the catalog without
 * any API event; this costs no request until a content turns out to be ours) and cuts a watch that
 * fell silent. A content whose snapshot no node holds stays unlabelled (docs/snapshots.md). A label
 * is only ever added, at the version read, so a labelled content is never changed. Failures are
 * logged at warn once per kind, then at debug.
 */
public final class ImportedSnapshots implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ImportedSnapshots.class);
  static final String CONTENTS = "/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents";
  static final String UNLABELLED = "labelSelector=" + encode("!" + SnapshotContent.MANAGED_BY);
  static final String MERGE_PATCH = "application/merge-patch+json";
  static final int PAGE = 500;
  static final int MAX_PAGE_CHARS = 8 << 20;
  static final Duration MIN_WATCH = Duration.ofMinutes(5);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  /** How often the unlabelled contents seen are held against the catalog again. */
  public static final Duration RECHECK = Duration.ofSeconds(30);

  private final KubeApi api;
  private final String driver;
  private final String node;
  private final Predicate<String> holds;
  private final Duration minWatch;
  private final Duration recheck;
  private final ScheduledThreadPoolExecutor worker;
  private final Map<String, Boolean> warned = new LinkedHashMap<>();

  /** Unlabelled pre-provisioned contents of this driver, by name; touched on the worker only. */
  private final Map<String, SnapshotContent> unclaimed = new HashMap<>();

  private volatile boolean running = true;
  private volatile Thread reader;
  private String resourceVersion;
  private boolean gone;

  /**
   * @param driver this driver's name: only contents whose {@code spec.driver} it is are looked at
   * @param node this node's name, the label's value (csi-snapshotter's NODE_NAME)
   * @param holds whether this node's catalog holds a snapshot ID
   */
  public ImportedSnapshots(KubeApi api, String driver, String node, Predicate<String> holds) {
    this(api, driver, node, holds, MIN_WATCH, RECHECK);
  }

  ImportedSnapshots(
      KubeApi api,
      String driver,
      String node,
      Predicate<String> holds,
      Duration minWatch,
      Duration recheck) {
    this.api = api;
    this.driver = driver;
    this.node = node;
    this.holds = holds;
    this.minWatch = minWatch;
    this.recheck = recheck;
    this.worker =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "snapshot-import");
              t.setDaemon(true);
              return t;
            });
    worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    worker.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
  }

  /** Lists, watches and labels on daemon threads until {@link #close}. */
  public void start() {
    LOG.atInfo()
        .addKeyValue("driver", driver)
        .addKeyValue("node", node)
        .log("labelling the pre-provisioned VolumeSnapshotContents whose snapshot this node holds");
    Thread t = new Thread(this::run, "snapshot-import-watch");
    t.setDaemon(true);
    reader = t;
    t.start();
    worker.scheduleWithFixedDelay(
        this::recheckAll, recheck.toMillis(), recheck.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Waits until the worker has done what it was handed so far (for tests). */
  void settle() throws InterruptedException {
    try {
      worker.submit(() -> {}).get(10, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("the worker did not settle", e);
    }
  }

  private void run() {
    int failures = 0;
    while (running) {
      try {
        boolean ok = resourceVersion == null ? list() : watch();
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

  /** Every unlabelled content, page by page; true when all were read and handed on. */
  private boolean list() throws InterruptedException {
    List<SnapshotContent> seen = new ArrayList<>();
    String next = "";
    String version;
    do {
      String path =
          CONTENTS
              + "?"
              + UNLABELLED
              + "&limit="
              + PAGE
              + (next.isEmpty() ? "" : "&continue=" + encode(next));
      KubeApi.Response response;
      try {
        response = api.get(path, MAX_PAGE_CHARS);
      } catch (IOException e) {
        failed("listing " + e.getClass().getSimpleName(), e.toString());
        return false;
      }
      if (!response.ok()) {
        failed("listing HTTP " + response.status(), cut(response.body()));
        return false;
      }
      Object page;
      try {
        page = JsonParser.parse(response.body());
      } catch (IllegalArgumentException e) {
        failed("listing body", e.getMessage());
        return false;
      }
      if (JsonParser.at(page, "items") instanceof List<?> items) {
        for (Object item : items) {
          SnapshotContent content = SnapshotContent.of(item);
          if (content != null) {
            seen.add(content);
          }
        }
      }
      version = text(JsonParser.at(page, "metadata", "resourceVersion"));
      next = text(JsonParser.at(page, "metadata", "continue"));
    } while (!next.isEmpty());
    if (version.isEmpty()) {
      failed("listing body", "the list has no resourceVersion");
      return false;
    }
    succeeded("listing");
    apply(() -> replace(seen));
    resourceVersion = version;
    return true;
  }

  /** One watch, until the server ends it; false when it failed. */
  private boolean watch() throws InterruptedException {
    long seconds =
        minWatch.toSeconds() + ThreadLocalRandom.current().nextLong(minWatch.toSeconds() + 1);
    String path =
        CONTENTS
            + "?"
            + UNLABELLED
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
      failed("watching " + e.getClass().getSimpleName(), e.toString());
      return false;
    } finally {
      guard.cancel(false);
    }
    Thread.interrupted();
    if (status == 410 || gone) {
      resourceVersion = null; // too old: list again
      return true;
    }
    if (status / 100 != 2) {
      failed("watching HTTP " + status, "");
      return false;
    }
    succeeded("watching");
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
    if ("ERROR".equals(type)) {
      if (JsonParser.at(object, "code") instanceof Number n && n.intValue() == 410) {
        gone = true;
      } else {
        failed("watch error", cut(String.valueOf(JsonParser.at(object, "message"))));
      }
      return;
    }
    String version = text(JsonParser.at(object, "metadata", "resourceVersion"));
    if (!version.isEmpty()) {
      resourceVersion = version;
    }
    SnapshotContent content = SnapshotContent.of(object);
    if (content == null) {
      return; // a bookmark, or nothing to act on
    }
    if ("ADDED".equals(type) || "MODIFIED".equals(type)) {
      apply(() -> observe(content));
    } else if ("DELETED".equals(type)) {
      // Deleted, or labelled (it left the selector): nothing more to do for it here.
      apply(() -> unclaimed.remove(content.name()));
    }
  }

  private void replace(List<SnapshotContent> seen) {
    unclaimed.clear();
    seen.forEach(this::observe);
  }

  /** On the worker: keeps an unlabelled import of this driver and labels it if it is ours. */
  private void observe(SnapshotContent content) {
    if (!content.unclaimedImportOf(driver) || !Ids.isSnapshotId(content.snapshotHandle())) {
      unclaimed.remove(content.name()); // labelled since, another driver's, or not a Soko ID
      return;
    }
    unclaimed.put(content.name(), content);
    claim(content);
  }

  private void recheckAll() {
    List.copyOf(unclaimed.values()).forEach(this::claim);
  }

  /** On the worker: labels the content with this node when its catalog holds the snapshot. */
  private void claim(SnapshotContent content) {
    boolean ours;
    try {
      ours = holds.test(content.snapshotHandle());
    } catch (RuntimeException e) {
      failed("reading the catalog", e.toString());
      return;
    }
    if (!ours) {
      return;
    }
    KubeApi.Response response;
    try {
      response =
          api.send(
              "PATCH",
              CONTENTS + "/" + encode(content.name()) + "?fieldManager=soko-driver",
              MERGE_PATCH,
              content.labelPatch(node));
    } catch (IOException e) {
      failed("labelling " + e.getClass().getSimpleName(), e.toString());
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (response.ok() || response.status() == 404) {
      unclaimed.remove(content.name());
      succeeded("labelling");
      if (response.ok()) {
        LOG.atInfo()
            .addKeyValue("content", content.name())
            .addKeyValue("snapshot", content.snapshotHandle())
            .addKeyValue("node", node)
            .log(
                "labelled a pre-provisioned VolumeSnapshotContent for this node's csi-snapshotter");
      }
    } else if (response.status() == 409) {
      // Changed since it was read: the watch brings the new version (or, if that change was a
      // label, its leaving the selector), which is looked at then; this version is done with.
      unclaimed.remove(content.name());
      LOG.debug("VolumeSnapshotContent {} changed before it was labelled", content.name());
    } else {
      failed("labelling HTTP " + response.status(), cut(response.body()));
    }
  }

  private void apply(Runnable change) {
    try {
      worker.execute(change);
    } catch (RejectedExecutionException e) {
      // closing: nothing needs labelling any more
    }
  }

  private static String text(Object value) {
    return value instanceof String s ? s : "";
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  private static String cut(String text) {
    return text.length() <= 256 ? text : text.substring(0, 255) + "…";
  }

  private synchronized void succeeded(String what) {
    if (warned.keySet().removeIf(kind -> kind.startsWith(what))) {
      LOG.info("snapshot import: {} works again", what);
    }
  }

  private synchronized void failed(String kind, String detail) {
    if (warned.put(kind, Boolean.TRUE) == null) {
      LOG.warn("snapshot import: {} failed (logged once; retried): {}", kind, detail);
    } else {
      LOG.debug("snapshot import: {} failed: {}", kind, detail);
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

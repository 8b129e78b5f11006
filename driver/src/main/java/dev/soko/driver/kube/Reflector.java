package dev.soko.driver.kube;

import dev.soko.driver.json.JsonParser;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one view of the API server current the way client-go's reflector does: a read (a GET or a
 * LIST), then a watch from the version read, with bookmarks, renewed when the server ends it (it
 * asks for a random length between {@code minWatch} and twice that, as the reflector does), and a
 * new read when the version is too old (410, in the status or in an ERROR event). A watch that fell
 * silent (no line for longer than it may last) is cut by a watchdog. Failures back off with jitter,
 * up to {@link #MAX_BACKOFF} (or as long as the source asks, {@link #waitBeforeNextRead}), and are
 * logged at warn once per kind, then at debug until that kind works again.
 *
 * <p>Two daemon threads: one reads and watches; the other (the worker) runs what the {@link Source}
 * hands it with {@link #apply}, in order, and the watchdog, so that the watchdog's interrupt never
 * reaches the source's own work (which may open files: an interrupt would close them).
 */
public final class Reflector implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Reflector.class);
  public static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  /** What is read and watched, and what is done with it. */
  public interface Source {
    /**
     * Reads the current state and hands it on; the version to watch from, or empty when the read
     * failed (after saying why with {@link Reflector#failed}) or found nothing to watch.
     */
    Optional<String> read() throws InterruptedException;

    /**
     * The watch's path and query without the watch parameters, e.g. {@code
     * /api/v1/nodes?fieldSelector=...}.
     */
    String watchPath();

    /** One watch event other than an ERROR (ADDED, MODIFIED, DELETED, BOOKMARK). */
    void event(String type, Object object);
  }

  private final KubeApi api;
  private final String subject;
  private final String watching;
  private final Duration minWatch;
  private final ScheduledThreadPoolExecutor worker;
  private final Map<String, Boolean> warned = new LinkedHashMap<>();
  private final String name;
  private Source source;
  private volatile boolean running = true;
  private volatile Thread reader;
  private volatile Duration nextWait;
  private String version;
  private boolean gone;

  /**
   * @param name the worker thread's name (the reader's is this with {@code -watch}), and the prefix
   *     of the log lines
   * @param watching what a watch failure is called in the log, e.g. {@code "watching Node"}
   */
  public Reflector(KubeApi api, String name, String watching, Duration minWatch) {
    this.api = api;
    this.name = name;
    this.subject = name.replace('-', ' ');
    this.watching = watching;
    this.minWatch = minWatch;
    this.worker =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, name);
              t.setDaemon(true);
              return t;
            });
    worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    worker.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
  }

  /** Set once, before the first read: the source usually holds this reflector too. */
  public void source(Source source) {
    this.source = source;
  }

  /** One read, now, on the calling thread; false when it failed (the watch then keeps trying). */
  public boolean readNow() throws InterruptedException {
    Optional<String> read = source.read();
    read.ifPresent(v -> version = v);
    return read.isPresent();
  }

  /** Reads and watches on a daemon thread until {@link #close}. */
  public void start() {
    Thread t = new Thread(this::run, name + "-watch");
    t.setDaemon(true);
    reader = t;
    t.start();
  }

  /** Runs {@code task} on the worker every {@code period}, from one period after now. */
  public void every(Duration period, Runnable task) {
    worker.scheduleWithFixedDelay(
        task, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Runs {@code task} on the worker once, {@code delay} from now. */
  public void after(Duration delay, Runnable task) {
    worker.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Makes the reader wait {@code wait} after this failure, in place of its backoff: for a source
   * that found nothing to read for a reason that lasts (an API the cluster does not serve), so that
   * it looks again slowly rather than every {@link #MAX_BACKOFF}.
   */
  public void waitBeforeNextRead(Duration wait) {
    nextWait = wait;
  }

  /** Before {@link #start} at once, on the caller; after it on the worker, in order. */
  public void apply(Runnable change) {
    if (reader == null) {
      change.run();
      return;
    }
    try {
      worker.execute(change);
    } catch (RejectedExecutionException e) {
      // closing: nobody needs the change any more
    }
  }

  /** Waits until the worker has done what it was handed so far (for tests). */
  public void settle() throws InterruptedException {
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
        boolean ok = version == null ? readNow() : watch();
        failures = ok ? 0 : failures + 1;
      } catch (InterruptedException e) {
        if (!running) {
          return;
        }
        failures++;
      }
      if (failures > 0 && running) {
        try {
          Thread.sleep(waitMillis(failures));
        } catch (InterruptedException e) {
          if (!running) {
            return;
          }
        }
      }
    }
  }

  /** The wait the source asked for, or else the backoff after {@code failures} failures. */
  private long waitMillis(int failures) {
    Duration asked = nextWait;
    nextWait = null;
    if (asked != null) {
      return asked.toMillis();
    }
    long cap = Math.min(MAX_BACKOFF.toMillis(), 500L << Math.min(failures, 6));
    return cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1);
  }

  /** One watch, until the server ends it; false when it failed. */
  private boolean watch() throws InterruptedException {
    long seconds =
        minWatch.toSeconds() + ThreadLocalRandom.current().nextLong(minWatch.toSeconds() + 1);
    String path =
        source.watchPath()
            + "&watch=true&allowWatchBookmarks=true&resourceVersion="
            + encode(version)
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
      failed(watching + " " + e.getClass().getSimpleName(), e.toString());
      return false;
    } finally {
      guard.cancel(false);
    }
    Thread.interrupted();
    if (status == 410 || gone) {
      version = null; // too old: read again
      return true;
    }
    if (status / 100 != 2) {
      failed(watching + " HTTP " + status, "");
      return false;
    }
    succeeded(watching);
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
    String seen = text(JsonParser.at(object, "metadata", "resourceVersion"));
    if (!seen.isEmpty()) {
      version = seen;
    }
    if (type instanceof String known) {
      source.event(known, object);
    }
  }

  /** Ends a run of failures of every kind that starts with {@code what}, saying so once. */
  public synchronized void succeeded(String what) {
    if (warned.keySet().removeIf(kind -> kind.startsWith(what))) {
      LOG.info("{}: {} works again", subject, what);
    }
  }

  /** A failure, logged at warn the first time of its kind, at debug after that. */
  public synchronized void failed(String kind, String detail) {
    if (warned.put(kind, Boolean.TRUE) == null) {
      LOG.warn("{}: {} failed (logged once; retried): {}", subject, kind, detail);
    } else {
      LOG.debug("{}: {} failed: {}", subject, kind, detail);
    }
  }

  public static String text(Object value) {
    return value instanceof String s ? s : "";
  }

  public static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  /** A response body short enough for a log line. */
  public static String cut(String text) {
    return text.length() <= 256 ? text : text.substring(0, 255) + "…";
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

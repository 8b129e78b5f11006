package dev.soko.driver.report;

import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.volume.MetricsView;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this node's StorageNode up to date and records an Event when a pool is refused, or when a
 * pool that holds volumes stops being selected on this node. Writes on start, soon after every
 * change of a pool's verdict (at most once per {@code minInterval}), and every {@code period}
 * (jittered by up to a tenth, so that a thousand nodes do not write in step) with fresh physical
 * readings. It never throws into the driver: a failed write is logged at warn once per kind of
 * error (then at debug) and the next write tries again. One daemon thread.
 */
public final class PoolReporter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PoolReporter.class);
  public static final Duration PERIOD = Duration.ofSeconds(60);
  public static final Duration MIN_INTERVAL = Duration.ofSeconds(5);
  static final int MAX_PENDING_EVENTS = 32;
  static final String APPLY = "application/apply-patch+yaml";
  private static final TimeUnit MILLIS = TimeUnit.MILLISECONDS;

  /**
   * How often the pools are re-checked: the driver's own bound on a pool's verdict (PoolStates).
   */
  public static final Duration RECHECK = Duration.ofSeconds(10);

  private final KubeApi api;
  private final ReportIdentity id;
  private final String version;
  private final Optional<String> dataEndpoint;
  private final Supplier<Map<String, PoolVerdict>> verdicts;
  private final Supplier<MetricsView> metrics;
  private final Clock clock;
  private final Duration period;
  private final Duration minInterval;
  private final ScheduledExecutorService executor;
  private final Queue<PendingEvent> events = new ArrayDeque<>();
  private final Set<String> warned = new HashSet<>();
  private Map<String, PoolVerdict> known = new LinkedHashMap<>();
  private boolean soonPending;
  private long lastWrite = Long.MIN_VALUE;

  /**
   * @param dataEndpoint where this node's data port serves ({@code host:port}), when it does
   * @param verdicts every configured pool's verdict, re-checked when old enough
   * @param metrics the open pools' readings
   */
  public PoolReporter(
      KubeApi api,
      ReportIdentity id,
      String version,
      Optional<String> dataEndpoint,
      Supplier<Map<String, PoolVerdict>> verdicts,
      Supplier<MetricsView> metrics,
      Clock clock,
      Duration period,
      Duration minInterval) {
    this.api = api;
    this.id = id;
    this.version = version;
    this.dataEndpoint = dataEndpoint;
    this.verdicts = verdicts;
    this.metrics = metrics;
    this.clock = clock;
    this.period = period;
    this.minInterval = minInterval;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "pool-report");
              t.setDaemon(true);
              return t;
            });
  }

  /** Writes now and then every period; re-checks the pools every {@link #RECHECK}. */
  public void start() {
    LOG.atInfo()
        .addKeyValue("server", api.server())
        .addKeyValue("storageNode", id.name())
        .log("reporting pools to the API server");
    executor.execute(this::periodic);
    startRechecking(RECHECK);
  }

  /**
   * Asks for the verdicts every {@code interval}, so that a pool whose disk is mounted (or lost)
   * changes state within that bound even when no CSI call or probe asks: the verdicts are only
   * re-evaluated when asked for, and a change reaches {@link #onVerdicts}, which writes the report.
   */
  void startRechecking(Duration interval) {
    executor.scheduleWithFixedDelay(
        () -> {
          try {
            verdicts.get();
          } catch (RuntimeException e) {
            LOG.warn("cannot re-check the pools: {}", e.toString());
          }
        },
        interval.toMillis(),
        interval.toMillis(),
        MILLIS);
  }

  /** An Event to send with the next report; whether a deselection is worth one is seen then. */
  private record PendingEvent(String pool, PoolVerdict verdict) {}

  /**
   * A listener for verdict changes (it runs under the caller's lock, so it only takes note): a pool
   * that became refused, or is refused for a new reason, gets an Event, and so does one that
   * stopped being selected (if it holds volumes, which is known when the Event is sent); the
   * StorageNode is written soon.
   */
  public synchronized void onVerdicts(Map<String, PoolVerdict> next) {
    for (Map.Entry<String, PoolVerdict> entry : next.entrySet()) {
      PoolVerdict verdict = entry.getValue();
      PoolVerdict before = known.get(entry.getKey());
      boolean refused = verdict.state() == PoolVerdict.State.REFUSED && !verdict.equals(before);
      boolean deselected =
          verdict.state() == PoolVerdict.State.NOT_SELECTED
              && before != null
              && before.state() != PoolVerdict.State.NOT_SELECTED;
      if ((refused || deselected) && events.size() < MAX_PENDING_EVENTS) {
        events.add(new PendingEvent(entry.getKey(), verdict));
      }
    }
    known = new LinkedHashMap<>(next);
    if (!soonPending && !executor.isShutdown()) {
      soonPending = true;
      long wait = Math.max(0, lastWrite + minInterval.toMillis() - clock.millis());
      executor.schedule(this::reportSoon, lastWrite == Long.MIN_VALUE ? 0 : wait, MILLIS);
    }
  }

  private void reportSoon() {
    synchronized (this) {
      soonPending = false;
    }
    report();
  }

  private void periodic() {
    report();
    long jitter = ThreadLocalRandom.current().nextLong(period.toMillis() / 10 + 1);
    if (!executor.isShutdown()) {
      executor.schedule(
          this::periodic, period.toMillis() - period.toMillis() / 20 + jitter, MILLIS);
    }
  }

  /** One round: pending Events first, then the StorageNode. Never throws. */
  void report() {
    try {
      Map<String, PoolVerdict> now = verdicts.get(); // may hand a change to onVerdicts
      PendingEvent event;
      while ((event = nextEvent()) != null) {
        String body = eventBody(event);
        if (body != null) {
          send("POST", "/api/v1/namespaces/default/events", "application/json", body, "event");
        }
      }
      synchronized (this) {
        lastWrite = clock.millis();
      }
      send(
          "PATCH",
          "/apis/soko.dev/v1alpha1/storagenodes/"
              + id.name()
              + "?fieldManager=soko-driver&force=true",
          APPLY,
          NodeReport.storageNode(id, version, dataEndpoint, clock.instant(), now, metrics.get()),
          "storagenode");
    } catch (RuntimeException e) {
      failed("reading pools", e.toString());
    }
  }

  private synchronized PendingEvent nextEvent() {
    return events.poll();
  }

  /** The Event's JSON, or null for a deselected pool without volumes (nothing is affected). */
  private String eventBody(PendingEvent event) {
    String reason = event.verdict().reason();
    if (event.verdict().state() == PoolVerdict.State.REFUSED) {
      return NodeReport.refusedEvent(id, event.pool(), reason, clock.instant());
    }
    int volumes =
        (int) metrics.get().volumes().stream().filter(v -> event.pool().equals(v.pool())).count();
    return volumes == 0
        ? null
        : NodeReport.deselectedEvent(id, event.pool(), reason, volumes, clock.instant());
  }

  private void send(String method, String path, String type, String body, String what) {
    try {
      KubeApi.Response response = api.send(method, path, type, body);
      if (response.ok()) {
        succeeded(what);
      } else {
        failed(what + " HTTP " + response.status(), response.body());
      }
    } catch (IOException e) {
      failed(what + " " + e.getClass().getSimpleName(), e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private synchronized void succeeded(String what) {
    if (warned.removeIf(kind -> kind.startsWith(what + " "))) {
      LOG.info("writing the {} to the API server works again", what);
    }
  }

  private synchronized void failed(String kind, String detail) {
    if (warned.add(kind)) {
      LOG.warn("pool report: {} failed (logged once; retried): {}", kind, detail);
    } else {
      LOG.debug("pool report: {} failed: {}", kind, detail);
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}

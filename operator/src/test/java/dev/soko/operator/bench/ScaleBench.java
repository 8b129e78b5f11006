package dev.soko.operator.bench;

import dev.soko.api.v1alpha1.NodeStatus;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.operator.harness.AuditLog;
import dev.soko.operator.harness.ControlPlane;
import dev.soko.operator.harness.OperatorProcess;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The operator at 10, 100 and 1,000 simulated nodes on a real kube-apiserver, with the real
 * DaemonSet controller of kube-controller-manager creating the node-plugin Pods. The operator jar
 * runs as a process under its own user and RBAC; an audit log filtered to that user counts its
 * requests. Prints a Markdown table to stdout; progress goes to stderr.
 *
 * <p>Arguments: node counts (default 10 100 1000). System properties: bench.samples (changes per
 * kind and node count, default 10), bench.resync (the operator's --resync-interval in seconds,
 * default 30; the idle window is as long plus 3 s, so it holds one periodic resync).
 */
public final class ScaleBench {
  static final String NAME = "bench";
  static final String NAMESPACE = "soko-bench";
  static final String DRIVER = "bench.csi.soko.dev";
  static final String CLASS = "bench-sc";
  private static final String RECONCILE_SECONDS = "soko_operator_reconcile_duration_seconds";

  private final ControlPlane cp;
  private final KubernetesClient admin;
  private final SimulatedNodes nodes;
  private final StatusWatch watch;
  private final AuditLog audit;
  private final int samples = Integer.getInteger("bench.samples", 10);
  private final Duration resync = Duration.ofSeconds(Integer.getInteger("bench.resync", 30));
  private final Map<String, Map<Integer, String>> table = new LinkedHashMap<>();
  private final Map<String, Map<Integer, Double>> numbers = new LinkedHashMap<>();

  private ScaleBench(ControlPlane cp, KubernetesClient admin) {
    this.cp = cp;
    this.admin = admin;
    this.nodes = new SimulatedNodes(admin, NAMESPACE, DRIVER, CLASS);
    this.watch = new StatusWatch(admin, NAME);
    this.audit = cp.audit();
  }

  public static void main(String[] args) throws Exception {
    List<Integer> counts = new ArrayList<>();
    for (String a : args) {
      counts.add(Integer.parseInt(a));
    }
    if (counts.isEmpty()) {
      counts = List.of(10, 100, 1000);
    }
    long started = System.nanoTime();
    Path work = Files.createTempDirectory("soko-scale-bench");
    log("work dir " + work);
    try (ControlPlane cp = new ControlPlane(work, List.of()).start();
        KubernetesClient admin = cp.newAdminClient(48)) {
      cp.installCrdAndRbac();
      cp.startDaemonSetController();
      ScaleBench bench = new ScaleBench(cp, admin);
      try {
        bench.run(counts);
      } finally {
        bench.watch.close();
        bench.nodes.close();
      }
    }
    log(String.format("bench finished in %.0f s", (System.nanoTime() - started) / 1e9));
  }

  private void run(List<Integer> counts) throws Exception {
    admin.resource(cluster()).create();
    nodes.growTo(1);
    try (OperatorProcess op =
        OperatorProcess.start(
            cp.kubeconfig("operator"),
            cp.dir().resolve("logs/operator.log"),
            "bench",
            null,
            resync)) {
      op.awaitReady(Duration.ofSeconds(120));
      settle(1);
      Thread.sleep(5_000);
      put("operator RSS, MiB", 1, op.rssKiB() / 1024.0, "%.0f");
      for (int n : counts) {
        long t0 = System.nanoTime();
        nodes.growTo(n);
        settle(n);
        log(String.format("%d nodes settled in %.1f s", n, (System.nanoTime() - t0) / 1e9));
        measure(n, op);
      }
      if (!op.isAlive()) {
        throw new IllegalStateException("the operator exited; see " + op.log());
      }
    }
    print(counts);
  }

  /** Pods bound and ready, CSINodes and capacities written, and the status showing all n. */
  private void settle(int n) throws Exception {
    admin
        .apps()
        .daemonSets()
        .inNamespace(NAMESPACE)
        .withName(NAME + "-node")
        .waitUntilCondition(
            ds -> desiredScheduled(ds) >= n, 180, java.util.concurrent.TimeUnit.SECONDS);
    nodes.settle(n, 180);
    admin
        .apps()
        .deployments()
        .inNamespace(NAMESPACE)
        .withName(NAME + "-controller")
        .waitUntilCondition(Objects::nonNull, 60, java.util.concurrent.TimeUnit.SECONDS);
    // No controller runs Deployments here: the status of the controller Deployment is written as
    // its controller would once its pod is ready.
    admin
        .apps()
        .deployments()
        .inNamespace(NAMESPACE)
        .withName(NAME + "-controller")
        .editStatus(
            d -> {
              d.setStatus(
                  new io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder()
                      .withReplicas(1)
                      .withReadyReplicas(1)
                      .withAvailableReplicas(1)
                      .withUpdatedReplicas(1)
                      .withObservedGeneration(d.getMetadata().getGeneration())
                      .build());
              return d;
            });
    watch.await(
        n + " nodes ready and registered in status",
        sc -> nodesAre(sc, n, n, n) && "0".equals(used(sc)),
        Duration.ofSeconds(180));
  }

  private void measure(int n, OperatorProcess op) throws Exception {
    Thread.sleep(3_000);
    // Idle: one periodic resync falls into a window one resync interval (+3 s) long.
    double reconcileSeconds = op.metric(RECONCILE_SECONDS + "_sum");
    double reconciles = op.metric(RECONCILE_SECONDS + "_count");
    Instant idleFrom = Instant.now();
    Thread.sleep(resync.plusSeconds(3).toMillis());
    Instant idleTo = Instant.now();
    Thread.sleep(1_000);
    double resyncs = op.metric(RECONCILE_SECONDS + "_count") - reconciles;
    if (resyncs > 0) {
      // The operator's own timer: the reconcile from start to status, its GC pauses included. The
      // audit log shows only when its requests came, and a resync's all come at its start.
      put(
          "full resync duration, ms",
          n,
          (op.metric(RECONCILE_SECONDS + "_sum") - reconcileSeconds) / resyncs * 1000,
          "%.0f");
    }
    List<AuditLog.Request> idle = noLeases(audit.between(idleFrom, idleTo));
    double seconds = Duration.between(idleFrom, idleTo).toMillis() / 1000.0;
    put(
        "idle API load, requests/s (resync " + resync.toSeconds() + " s)",
        n,
        idle.size() / seconds,
        "%.2f");
    List<List<AuditLog.Request>> bursts = bursts(idle);
    if (!bursts.isEmpty()) {
      List<AuditLog.Request> resyncBurst = bursts.get(bursts.size() - 1);
      put("requests per no-op reconcile (periodic resync)", n, resyncBurst.size(), "%.0f");
      put("writes per no-op reconcile", n, writes(resyncBurst), "%.0f");
    }
    put("operator RSS, MiB", n, op.rssKiB() / 1024.0, "%.0f");
    byte[] raw =
        admin
            .raw("/apis/soko.dev/v1alpha1/storageclusters/" + NAME)
            .getBytes(StandardCharsets.UTF_8);
    put("StorageCluster object size, KiB", n, raw.length / 1024.0, "%.1f");

    List<Double> csiNode = new ArrayList<>();
    List<Double> capacity = new ArrayList<>();
    List<Double> unready = new ArrayList<>();
    List<Integer> csiNodeRequests = new ArrayList<>();
    List<Integer> capacityRequests = new ArrayList<>();
    List<Integer> unreadyRequests = new ArrayList<>();
    List<Integer> changeWrites = new ArrayList<>();
    for (int i = 0; i < samples; i++) {
      String node = SimulatedNodes.name((int) ((long) i * n / samples));
      change(
          "CSINode of " + node + " loses the driver",
          () -> nodes.registerDriver(node, false),
          sc -> nodesAre(sc, n, n, n - 1),
          () -> nodes.registerDriver(node, true),
          sc -> nodesAre(sc, n, n, n),
          csiNode,
          csiNodeRequests,
          changeWrites);
      change(
          "capacity of " + node + " changes",
          () -> nodes.publishCapacity(node, "5Gi", false),
          sc -> !"0".equals(used(sc)) && used(sc) != null,
          () -> nodes.publishCapacity(node, "10Gi", false),
          sc -> "0".equals(used(sc)),
          capacity,
          capacityRequests,
          changeWrites);
      String pod = nodes.podOf(node);
      change(
          "node-plugin pod on " + node + " goes unready",
          () -> nodes.setReady(pod, false),
          sc -> nodesAre(sc, n, n - 1, n),
          () -> nodes.setReady(pod, true),
          sc -> nodesAre(sc, n, n, n),
          unready,
          unreadyRequests,
          changeWrites);
    }
    latency("CSINode loses the driver → status", n, csiNode);
    latency("capacity changes → status", n, capacity);
    latency("node-plugin pod unready → status", n, unready);
    put("requests per change: CSINode (median)", n, median(csiNodeRequests), "%.0f");
    put("requests per change: capacity (median)", n, median(capacityRequests), "%.0f");
    put("requests per change: pod unready (median)", n, median(unreadyRequests), "%.0f");
    put("writes per change (median)", n, median(changeWrites), "%.0f");
    measureReports(n, op);
  }

  /**
   * The drivers' StorageNode reports: all n written, then all n rewritten with new physical
   * readings (the 60 s refresh, here in one burst), which must not make the operator reconcile or
   * send anything; then one node's pool refused until the status shows Degraded PoolRefused. The
   * reports are deleted afterwards, so that the next count's capacity rows still read
   * CSIStorageCapacity (a node's report takes precedence over it).
   */
  private void measureReports(int n, OperatorProcess op) throws Exception {
    nodes.reportAll(NAME, n, 1L << 30);
    watch.await(
        n + " reports Ready in status.poolSummary",
        sc -> poolsReady(sc) == n,
        Duration.ofSeconds(180));
    Thread.sleep(3_000);
    double reconciles = op.metric(RECONCILE_SECONDS + "_count");
    Instant from = Instant.now();
    nodes.reportAll(NAME, n, 2L << 30);
    Thread.sleep(3_000);
    List<AuditLog.Request> window = noLeases(audit.between(from, Instant.now()));
    put(
        "reconciles per refresh of all n reports (physical readings only)",
        n,
        op.metric(RECONCILE_SECONDS + "_count") - reconciles,
        "%.0f");
    put(
        "operator requests per refresh of all n reports",
        n,
        window.stream().filter(r -> !"watch".equals(r.verb())).count(),
        "%.0f");
    List<Double> refused = new ArrayList<>();
    List<Integer> requests = new ArrayList<>();
    List<Integer> writes = new ArrayList<>();
    for (int i = 0; i < samples; i++) {
      String node = SimulatedNodes.name((int) ((long) i * n / samples));
      change(
          "pool of " + node + " refused in its report",
          () -> nodes.report(NAME, node, false, 0),
          sc -> "PoolRefused".equals(degradedReason(sc)),
          () -> nodes.report(NAME, node, true, 1L << 30),
          sc -> !"PoolRefused".equals(degradedReason(sc)),
          refused,
          requests,
          writes);
    }
    latency("pool refused in a report → status Degraded", n, refused);
    put("requests per change: report (median)", n, median(requests), "%.0f");
    nodes.deleteReports(NAME);
    watch.await("reports gone from status", sc -> poolsReady(sc) == 0, Duration.ofSeconds(180));
  }

  /**
   * Makes a change, times it until the status shows it, counts the operator's requests from the
   * change until 1 s after the status showed it, then undoes the change and waits for the status.
   */
  private void change(
      String what,
      Runnable make,
      Predicate<StorageCluster> shown,
      Runnable undo,
      Predicate<StorageCluster> restored,
      List<Double> latencies,
      List<Integer> requests,
      List<Integer> writes)
      throws Exception {
    Instant from = Instant.now();
    long t0 = System.nanoTime();
    make.run();
    long t1 = watch.await(what, shown, Duration.ofSeconds(60));
    latencies.add((t1 - t0) / 1e6);
    // When it was sent, to find the change in the audit log and the operator's log.
    log(String.format("%s: in status after %.0f ms (sent %s)", what, (t1 - t0) / 1e6, from));
    Thread.sleep(1_000);
    List<AuditLog.Request> window = noLeases(audit.between(from, Instant.now()));
    requests.add(window.size());
    writes.add(writes(window));
    undo.run();
    watch.await("undo: " + what, restored, Duration.ofSeconds(60));
    Thread.sleep(300);
  }

  private static List<AuditLog.Request> noLeases(List<AuditLog.Request> requests) {
    return requests.stream().filter(r -> !r.isLease()).toList();
  }

  private static int writes(List<AuditLog.Request> requests) {
    return (int) requests.stream().filter(AuditLog.Request::isWrite).count();
  }

  /** Requests grouped into bursts: a gap of more than 2 s starts a new one (watches excluded). */
  static List<List<AuditLog.Request>> bursts(List<AuditLog.Request> requests) {
    List<List<AuditLog.Request>> out = new ArrayList<>();
    List<AuditLog.Request> current = null;
    Instant last = null;
    for (AuditLog.Request r :
        requests.stream()
            .filter(r -> !"watch".equals(r.verb()))
            .sorted(java.util.Comparator.comparing(AuditLog.Request::received))
            .toList()) {
      if (last == null || Duration.between(last, r.received()).toMillis() > 2_000) {
        current = new ArrayList<>();
        out.add(current);
      }
      current.add(r);
      last = r.received();
    }
    return out;
  }

  private void latency(String what, int n, List<Double> ms) {
    List<Double> sorted = ms.stream().sorted().toList();
    double p50 = sorted.get((sorted.size() - 1) / 2);
    double p99 = sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(0.99 * sorted.size()) - 1));
    put(what + ", p50 ms", n, p50, "%.0f");
    put(what + ", p99 ms (of " + ms.size() + ")", n, p99, "%.0f");
  }

  private static double median(List<Integer> values) {
    List<Integer> sorted = values.stream().sorted().toList();
    return sorted.get((sorted.size() - 1) / 2);
  }

  private void put(String row, int n, double value, String format) {
    table.computeIfAbsent(row, k -> new LinkedHashMap<>()).put(n, String.format(format, value));
    numbers.computeIfAbsent(row, k -> new LinkedHashMap<>()).put(n, value);
    log(row + " @ " + n + ": " + String.format(format, value));
  }

  private void print(List<Integer> counts) {
    StringBuilder header = new StringBuilder("| measurement | 1 |");
    StringBuilder rule = new StringBuilder("|---|---:|");
    for (int n : counts) {
      header.append(' ').append(n).append(" |");
      rule.append("---:|");
    }
    int first = counts.get(0);
    int last = counts.get(counts.size() - 1);
    header.append(" ").append(last).append(" / ").append(first).append(" |");
    rule.append("---:|");
    System.out.println(header);
    System.out.println(rule);
    for (var row : table.entrySet()) {
      StringBuilder line = new StringBuilder("| ").append(row.getKey()).append(" | ");
      line.append(row.getValue().getOrDefault(1, "")).append(" |");
      for (int n : counts) {
        line.append(' ').append(row.getValue().getOrDefault(n, "–")).append(" |");
      }
      Double a = numbers.get(row.getKey()).get(first);
      Double b = numbers.get(row.getKey()).get(last);
      line.append(' ')
          .append(a == null || b == null || a == 0 ? "–" : String.format("%.1f×", b / a))
          .append(" |");
      System.out.println(line);
    }
    System.out.printf(
        "%nNode counts %s; %d changes per kind and count; operator --resync-interval %d s; ratio"
            + " column: last count over first (node ratio %.0f×).%n",
        counts, samples, resync.toSeconds(), (double) last / first);
  }

  private static boolean nodesAre(StorageCluster sc, int desired, int ready, int registered) {
    NodeStatus s = sc.getStatus() == null ? null : sc.getStatus().getNodes();
    return s != null
        && Objects.equals(s.desired(), desired)
        && Objects.equals(s.ready(), ready)
        && Objects.equals(s.registered(), registered);
  }

  private static int poolsReady(StorageCluster sc) {
    if (sc.getStatus() == null || sc.getStatus().getPoolSummary() == null) {
      return 0;
    }
    return sc.getStatus().getPoolSummary().stream()
        .filter(s -> "main".equals(s.pool()))
        .mapToInt(s -> s.ready() == null ? 0 : s.ready())
        .sum();
  }

  private static String degradedReason(StorageCluster sc) {
    if (sc.getStatus() == null || sc.getStatus().getConditions() == null) {
      return null;
    }
    return sc.getStatus().getConditions().stream()
        .filter(c -> "Degraded".equals(c.getType()) && "True".equals(c.getStatus()))
        .map(c -> c.getReason())
        .findFirst()
        .orElse(null);
  }

  private static String used(StorageCluster sc) {
    return sc.getStatus() == null || sc.getStatus().getCapacity() == null
        ? null
        : sc.getStatus().getCapacity().used();
  }

  private static int desiredScheduled(DaemonSet ds) {
    return ds == null
            || ds.getStatus() == null
            || ds.getStatus().getDesiredNumberScheduled() == null
        ? 0
        : ds.getStatus().getDesiredNumberScheduled();
  }

  static StorageCluster cluster() {
    StorageCluster sc = new StorageCluster();
    sc.setMetadata(new ObjectMetaBuilder().withName(NAME).build());
    sc.setSpec(new StorageClusterSpec());
    sc.getSpec().setNamespace(NAMESPACE);
    sc.getSpec().getDriver().setName(DRIVER);
    PoolSpec pool = new PoolSpec();
    pool.setName("main");
    pool.setPath("/var/lib/soko/main");
    pool.setCapacity("10Gi");
    sc.getSpec().setPools(new ArrayList<>(List.of(pool)));
    StorageClassSpec cls = new StorageClassSpec();
    cls.setName(CLASS);
    cls.setPool("main");
    sc.getSpec().setStorageClasses(new ArrayList<>(List.of(cls)));
    return sc;
  }

  private static void log(String s) {
    System.err.println("[bench " + Instant.now() + "] " + s);
  }
}

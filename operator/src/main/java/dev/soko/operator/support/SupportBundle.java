package dev.soko.operator.support;

import dev.soko.api.v1alpha1.DriverSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.Component;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.VersionsTable;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Collects, through the Kubernetes API only, what it takes to understand a Soko installation, into
 * one gzip'd tar archive:
 *
 * <pre>
 * summary.txt, manifest.json                    when, which cluster, versions, collected, failed
 * cluster/&lt;kind&gt;/&lt;name&gt;.yaml                    Soko's cluster-scoped objects and its drivers'
 * namespaces/&lt;ns&gt;/&lt;kind&gt;/&lt;name&gt;.yaml            the operator's and every operand namespace
 * logs/&lt;ns&gt;/&lt;pod&gt;/&lt;container&gt;[.previous].log     operator, node plugin and controller pods
 * nodes/&lt;node&gt;/{mountinfo,loop-devices.json,pools.txt}   the node plugin's own view, by exec
 * </pre>
 *
 * Every step that fails (a forbidden list, a pod without logs, a node whose exec hangs) is recorded
 * in the archive, never fatal: a bundle is most needed when the cluster is least healthy. Secrets
 * are never listed, and every object goes through {@link Redaction}. Logs are copied as they are:
 * the operator and the driver do not log credentials.
 */
public final class SupportBundle {
  /** The label of the operator's own pods, from the Helm chart's selector labels. */
  public static final String OPERATOR_POD_LABEL = "app.kubernetes.io/name";

  public static final String OPERATOR_POD_VALUE = "soko-operator";
  static final String SNAPSHOT_API = "snapshot.storage.k8s.io/v1";

  /** Per log; the rest is left out, and the cut recorded. */
  static final long MAX_LOG_BYTES = 128L << 20;

  /** What was written. */
  public record Summary(
      Path archive,
      Instant time,
      String server,
      String kubernetesVersion,
      String operatorVersion,
      List<String> entries,
      List<String> failures) {}

  private final KubernetesClient client;
  private final Duration since;
  private final Duration execTimeout;
  private final Clock clock;
  private final List<String> failures = new ArrayList<>();
  private final Map<String, Integer> counts = new TreeMap<>();
  private TarArchive tar;
  private ExecutorService executor;

  SupportBundle(KubernetesClient client, Duration since, Duration execTimeout, Clock clock) {
    this.client = client;
    this.since = since;
    this.execTimeout = execTimeout;
    this.clock = clock;
  }

  /** Writes a bundle with the default per-exec timeout (20 s). */
  public static Summary write(KubernetesClient client, Path out, Duration since)
      throws IOException {
    return write(client, out, since, Duration.ofSeconds(20));
  }

  /**
   * Writes a bundle of the cluster {@code client} talks to into {@code out}, with logs of the last
   * {@code since} and each exec into a node plugin given at most {@code execTimeout}.
   */
  public static Summary write(
      KubernetesClient client, Path out, Duration since, Duration execTimeout) throws IOException {
    return new SupportBundle(client, since, execTimeout, Clock.systemUTC()).collect(out);
  }

  Summary collect(Path out) throws IOException {
    Instant now = clock.instant();
    String server = client.getMasterUrl() == null ? "unknown" : client.getMasterUrl().getHost();
    int failedBefore = failures.size();
    String k8s =
        Objects.requireNonNullElse(
            attempt("kubernetes version", () -> client.getKubernetesVersion().getGitVersion()),
            "unknown");
    // /version is open to every client: when even it fails, the API server is not reachable, and
    // every further request would only wait out the client's retries to fail the same way.
    boolean reachable = failures.size() == failedBefore;
    String operator = operatorVersion();
    // Daemon threads: an exec that never returns must not keep the command from exiting.
    executor =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "soko-support-exec");
              t.setDaemon(true);
              return t;
            });
    try (TarArchive archive = new TarArchive(out, now)) {
      tar = archive;
      if (reachable) {
        collectAll();
      } else {
        failures.add("nothing collected: the API server did not answer /version");
      }
      List<String> entries = new ArrayList<>(tar.names());
      entries.add("summary.txt");
      entries.add("manifest.json");
      Summary summary =
          new Summary(out, now, server, k8s, operator, entries, List.copyOf(failures));
      tar.add("summary.txt", summaryText(summary));
      tar.add("manifest.json", manifest(summary));
      return summary;
    } finally {
      tar = null;
      executor.shutdownNow();
    }
  }

  private void collectAll() {
    List<StorageCluster> clusters =
        list("cluster", "StorageCluster", () -> client.resources(StorageCluster.class).list());
    list("cluster", "StorageNode", () -> client.resources(StorageNode.class).list());
    Set<String> drivers = new LinkedHashSet<>();
    Set<String> operands = new LinkedHashSet<>();
    for (StorageCluster sc : clusters) {
      drivers.add(driverName(sc));
      if (sc.getSpec() != null && sc.getSpec().getNamespace() != null) {
        operands.add(sc.getSpec().getNamespace());
      }
    }
    collectClusterScoped(drivers);
    List<Pod> operatorPods =
        attempt(
            "list operator pods",
            () ->
                client
                    .pods()
                    .inAnyNamespace()
                    .withLabel(OPERATOR_POD_LABEL, OPERATOR_POD_VALUE)
                    .list()
                    .getItems());
    Set<String> namespaces = new LinkedHashSet<>();
    if (operatorPods != null) {
      operatorPods.forEach(p -> namespaces.add(p.getMetadata().getNamespace()));
    }
    // The Deployment too: an operator whose pods are gone (a quota, a deleted ReplicaSet) is
    // exactly what a bundle should show.
    List<Deployment> operatorDeployments =
        attempt(
            "list operator Deployments",
            () ->
                client
                    .apps()
                    .deployments()
                    .inAnyNamespace()
                    .withLabel(OPERATOR_POD_LABEL, OPERATOR_POD_VALUE)
                    .list()
                    .getItems());
    if (operatorDeployments != null) {
      operatorDeployments.forEach(d -> namespaces.add(d.getMetadata().getNamespace()));
    }
    namespaces.addAll(operands);
    for (String ns : namespaces) {
      collectNamespace(ns);
    }
    List<Pod> operandPods = new ArrayList<>();
    for (String ns : operands) {
      List<Pod> pods =
          attempt(
              "list Soko pods in " + ns,
              () -> client.pods().inNamespace(ns).withLabel(Names.LABEL_CLUSTER).list().getItems());
      if (pods != null) {
        operandPods.addAll(pods);
      }
    }
    List<Pod> logged = new ArrayList<>(operatorPods == null ? List.of() : operatorPods);
    logged.addAll(operandPods);
    for (Pod pod : logged) {
      collectLogs(pod);
    }
    collectNodes(
        operandPods.stream()
            .filter(p -> Names.NODE.equals(label(p, "app.kubernetes.io/component")))
            .toList());
  }

  private void collectClusterScoped(Set<String> drivers) {
    list(
        "cluster",
        "CSIDriver",
        () -> client.storage().v1().csiDrivers().list(),
        d -> drivers.contains(d.getMetadata().getName()));
    // Every CSINode: one that does not list a driver says as much as one that does.
    list("cluster", "CSINode", () -> client.storage().v1().csiNodes().list());
    list(
        "cluster",
        "StorageClass",
        () -> client.storage().v1().storageClasses().list(),
        c -> drivers.contains(c.getProvisioner()));
    List<PersistentVolume> pvs =
        list(
            "cluster",
            "PersistentVolume",
            () -> client.persistentVolumes().list(),
            pv ->
                pv.getSpec() != null
                    && pv.getSpec().getCsi() != null
                    && drivers.contains(pv.getSpec().getCsi().getDriver()));
    for (PersistentVolume pv : pvs) {
      var ref = pv.getSpec().getClaimRef();
      if (ref == null || ref.getNamespace() == null || ref.getName() == null) {
        continue;
      }
      PersistentVolumeClaim pvc =
          attempt(
              "get PersistentVolumeClaim " + ref.getNamespace() + "/" + ref.getName(),
              () ->
                  client
                      .persistentVolumeClaims()
                      .inNamespace(ref.getNamespace())
                      .withName(ref.getName())
                      .get());
      if (pvc != null) {
        writeObject("namespaces/" + ref.getNamespace() + "/PersistentVolumeClaim", pvc);
      }
    }
    if (Boolean.TRUE.equals(attempt("discover " + SNAPSHOT_API, this::snapshotsServed))) {
      Predicate<GenericKubernetesResource> ofDriver =
          r -> drivers.contains(Objects.toString(r.getAdditionalProperties().get("driver"), null));
      list(
          "cluster",
          "VolumeSnapshotClass",
          () -> client.genericKubernetesResources(SNAPSHOT_API, "VolumeSnapshotClass").list(),
          ofDriver);
      list(
          "cluster",
          "VolumeSnapshotContent",
          () -> client.genericKubernetesResources(SNAPSHOT_API, "VolumeSnapshotContent").list(),
          r ->
              r.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec
                  && drivers.contains(Objects.toString(spec.get("driver"), null)));
    } else {
      note("skipped VolumeSnapshotClass, VolumeSnapshotContent: " + SNAPSHOT_API + " not served");
    }
    list(
        "cluster",
        "ClusterRole",
        () -> client.rbac().clusterRoles().list(),
        SupportBundle::ownedBySoko);
    list(
        "cluster",
        "ClusterRoleBinding",
        () -> client.rbac().clusterRoleBindings().list(),
        SupportBundle::ownedBySoko);
  }

  private boolean snapshotsServed() {
    return client.supports(SNAPSHOT_API, "VolumeSnapshotClass");
  }

  /** Everything of these kinds in a namespace of Soko's; Secrets are not among them. */
  private void collectNamespace(String ns) {
    String dir = "namespaces/" + ns;
    list(dir, "Deployment", () -> client.apps().deployments().inNamespace(ns).list());
    list(dir, "DaemonSet", () -> client.apps().daemonSets().inNamespace(ns).list());
    list(dir, "Pod", () -> client.pods().inNamespace(ns).list());
    list(dir, "ConfigMap", () -> client.configMaps().inNamespace(ns).list());
    list(dir, "ServiceAccount", () -> client.serviceAccounts().inNamespace(ns).list());
    list(dir, "Role", () -> client.rbac().roles().inNamespace(ns).list());
    list(dir, "RoleBinding", () -> client.rbac().roleBindings().inNamespace(ns).list());
    list(dir, "Lease", () -> client.leases().inNamespace(ns).list());
    list(dir, "Event", () -> client.v1().events().inNamespace(ns).list());
  }

  private void collectLogs(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    String name = pod.getMetadata().getName();
    Map<String, Integer> restarts = new LinkedHashMap<>();
    if (pod.getStatus() != null) {
      for (List<ContainerStatus> statuses :
          List.of(
              pod.getStatus().getInitContainerStatuses(), pod.getStatus().getContainerStatuses())) {
        for (ContainerStatus s : statuses) {
          restarts.put(s.getName(), s.getRestartCount() == null ? 0 : s.getRestartCount());
        }
      }
    }
    List<Container> containers = new ArrayList<>(pod.getSpec().getInitContainers());
    containers.addAll(pod.getSpec().getContainers());
    int seconds = (int) Math.min(Integer.MAX_VALUE, Math.max(1, since.toSeconds()));
    for (Container c : containers) {
      String base = "logs/" + ns + "/" + name + "/" + c.getName();
      log(
          base + ".log",
          () ->
              client
                  .pods()
                  .inNamespace(ns)
                  .withName(name)
                  .inContainer(c.getName())
                  .sinceSeconds(seconds)
                  .getLogInputStream());
      if (restarts.getOrDefault(c.getName(), 0) > 0) {
        log(
            base + ".previous.log",
            () ->
                client
                    .pods()
                    .inNamespace(ns)
                    .withName(name)
                    .inContainer(c.getName())
                    .terminated()
                    .sinceSeconds(seconds)
                    .getLogInputStream());
      }
    }
  }

  /**
   * Copies one log into the archive through a temporary file: the archive needs its size before its
   * bytes, and a day of a debug-level driver log is more than the operator's heap.
   */
  private void log(String entry, Supplier<InputStream> open) {
    Path tmp = null;
    try {
      tmp = Files.createTempFile("soko-support-", ".log");
      boolean cut;
      try (InputStream in = open.get();
          OutputStream file = Files.newOutputStream(tmp)) {
        cut = copy(in, file, MAX_LOG_BYTES);
        if (cut) {
          file.write(
              ("\n[cut at " + (MAX_LOG_BYTES >> 20) + " MiB by the support bundle]\n")
                  .getBytes(StandardCharsets.UTF_8));
        }
      }
      tar.add(entry, tmp);
      count("log");
      if (cut) {
        failures.add(entry + ": cut at " + (MAX_LOG_BYTES >> 20) + " MiB");
      }
    } catch (IOException | RuntimeException e) {
      fail(entry, e);
      add(entry + ".ERROR.txt", message(e) + "\n");
    } finally {
      if (tmp != null) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException e) {
          // A temporary file left behind costs nothing the bundle needs.
        }
      }
    }
  }

  /** Copies at most {@code max} bytes; true when there was more. */
  static boolean copy(InputStream in, OutputStream out, long max) throws IOException {
    byte[] buffer = new byte[1 << 16];
    long left = max;
    while (left > 0) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (n < 0) {
        return false;
      }
      out.write(buffer, 0, n);
      left -= n;
    }
    return in.read() >= 0;
  }

  /** The node plugins' view, one node at a time, each exec bounded by {@link #execTimeout}. */
  private void collectNodes(List<Pod> nodePods) {
    Map<String, List<Pod>> byNode = new TreeMap<>();
    for (Pod pod : nodePods) {
      String node = pod.getSpec().getNodeName();
      if (node != null) {
        byNode.computeIfAbsent(node, k -> new ArrayList<>()).add(pod);
      }
    }
    for (var e : byNode.entrySet()) {
      String dir = "nodes/" + e.getKey() + "/";
      StringBuilder errors = new StringBuilder();
      Pod first = e.getValue().get(0);
      nodeFile(dir + "mountinfo", first, errors, "cat", "/proc/self/mountinfo");
      nodeFile(dir + "loop-devices.json", first, errors, "losetup", "--list", "--json");
      StringBuilder pools = new StringBuilder();
      for (Pod pod : e.getValue()) {
        for (Map.Entry<String, String> pool : pools(pod).entrySet()) {
          String path = pool.getValue();
          String where = label(pod, Names.LABEL_CLUSTER) + " pool " + pool.getKey() + " at " + path;
          for (String[] cmd :
              List.of(
                  new String[] {"ls", "-la", path}, new String[] {"du", "-k", "-d", "1", path})) {
            pools.append("### ").append(where).append(": ").append(String.join(" ", cmd));
            pools.append('\n');
            try {
              pools.append(exec(pod, cmd));
            } catch (IOException | RuntimeException ex) {
              String m = String.join(" ", cmd) + " in " + podName(pod) + ": " + message(ex);
              pools.append("failed: ").append(m).append('\n');
              errors.append(m).append('\n');
              failures.add(dir + "pools.txt: " + m);
            }
            pools.append('\n');
          }
        }
      }
      if (!pools.isEmpty()) {
        add(dir + "pools.txt", pools.toString());
      }
      if (!errors.isEmpty()) {
        add(dir + "ERROR.txt", errors.toString());
      } else {
        count("node");
      }
    }
  }

  private void nodeFile(String entry, Pod pod, StringBuilder errors, String... cmd) {
    try {
      add(entry, exec(pod, cmd));
    } catch (IOException | RuntimeException e) {
      String m = String.join(" ", cmd) + " in " + podName(pod) + ": " + message(e);
      errors.append(m).append('\n');
      failures.add(entry + ": " + m);
    }
  }

  /** The pools of a node plugin pod: name to path, from its driver container's --pool args. */
  static Map<String, String> pools(Pod pod) {
    Map<String, String> pools = new LinkedHashMap<>();
    for (Container c : pod.getSpec().getContainers()) {
      if (!Component.DRIVER.key().equals(c.getName())) {
        continue;
      }
      for (String arg : c.getArgs()) {
        if (!arg.startsWith("--pool=")) {
          continue;
        }
        String name = null;
        String path = null;
        for (String field : arg.substring("--pool=".length()).split(",")) {
          if (field.startsWith("name=")) {
            name = field.substring(5);
          } else if (field.startsWith("path=")) {
            path = field.substring(5);
          }
        }
        if (path != null) {
          pools.put(name == null ? path : name, path);
        }
      }
    }
    return pools;
  }

  /** Runs a command in the pod's driver container, bounded as a whole by the exec timeout. */
  private String exec(Pod pod, String... cmd) throws IOException {
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    AtomicReference<ExecWatch> opened = new AtomicReference<>();
    try {
      Integer code =
          within(
              execTimeout,
              executor,
              () -> {
                ExecWatch watch =
                    client
                        .pods()
                        .inNamespace(pod.getMetadata().getNamespace())
                        .withName(pod.getMetadata().getName())
                        .inContainer(Component.DRIVER.key())
                        .writingOutput(stdout)
                        .writingError(stderr)
                        .exec(cmd);
                opened.set(watch);
                return watch.exitCode().get();
              });
      if (code == null) {
        throw new IOException("the connection closed without an exit status");
      }
      if (code != 0) {
        throw new IOException(
            "exit code " + code + ": " + stderr.toString(StandardCharsets.UTF_8).strip());
      }
      return stdout.toString(StandardCharsets.UTF_8);
    } finally {
      ExecWatch watch = opened.get();
      if (watch != null) {
        watch.close();
      }
    }
  }

  /**
   * The task's result if it comes within the timeout. The task runs on the executor, so that a step
   * which blocks where no timeout of its own applies (an exec's connection to a kubelet that does
   * not answer, retried by the client) is given up on all the same.
   */
  static <T> T within(Duration timeout, ExecutorService executor, Callable<T> task)
      throws IOException {
    Future<T> result = executor.submit(task);
    try {
      return result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IOException("no answer within " + format(timeout));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      while ((cause instanceof ExecutionException || cause instanceof CompletionException)
          && cause.getCause() != null) {
        cause = cause.getCause();
      }
      if (cause instanceof IOException io) {
        throw io;
      }
      throw new IOException(message(cause), cause);
    } finally {
      result.cancel(true);
    }
  }

  private static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  private <T extends HasMetadata> List<T> list(
      String dir,
      String kind,
      Supplier<? extends io.fabric8.kubernetes.api.model.KubernetesResourceList<T>> lister) {
    return list(dir, kind, lister, t -> true);
  }

  private <T extends HasMetadata> List<T> list(
      String dir,
      String kind,
      Supplier<? extends io.fabric8.kubernetes.api.model.KubernetesResourceList<T>> lister,
      Predicate<T> keep) {
    List<T> items =
        attempt(
            "list " + kind + ("cluster".equals(dir) ? "" : " in " + dir),
            () -> lister.get().getItems());
    if (items == null) {
      return List.of();
    }
    List<T> kept = items.stream().filter(keep).toList();
    for (T item : kept) {
      writeObject(dir + "/" + kind, item);
    }
    return kept;
  }

  private void writeObject(String dir, HasMetadata object) {
    String entry = dir + "/" + object.getMetadata().getName() + ".yaml";
    try {
      add(entry, Redaction.yaml(object));
      count(dir.substring(dir.lastIndexOf('/') + 1));
    } catch (RuntimeException e) {
      fail(entry, e);
    }
  }

  private <T> T attempt(String what, Supplier<T> step) {
    try {
      return step.get();
    } catch (RuntimeException e) {
      fail(what, e);
      return null;
    }
  }

  private void add(String entry, String text) {
    try {
      tar.add(entry, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void fail(String what, Throwable e) {
    failures.add(what + ": " + message(e));
  }

  private void note(String text) {
    counts.merge("(" + text + ")", 0, Integer::sum);
  }

  private void count(String kind) {
    counts.merge(kind, 1, Integer::sum);
  }

  private String summaryText(Summary s) {
    StringBuilder b = new StringBuilder();
    b.append("Soko support bundle\n");
    b.append("time: ").append(s.time()).append('\n');
    b.append("cluster: ").append(s.server()).append('\n');
    b.append("kubernetes: ").append(s.kubernetesVersion()).append('\n');
    b.append("operator: ").append(s.operatorVersion()).append('\n');
    b.append("logs since: ").append(since).append('\n');
    b.append("\ncollected:\n");
    counts.forEach(
        (k, v) -> b.append("  ").append(k).append(k.startsWith("(") ? "" : ": " + v).append('\n'));
    b.append(s.failures().isEmpty() ? "\nfailed: nothing\n" : "\nfailed:\n");
    s.failures().forEach(f -> b.append("  ").append(f).append('\n'));
    return b.toString();
  }

  private String manifest(Summary s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("time", s.time().toString());
    m.put("server", s.server());
    m.put("kubernetesVersion", s.kubernetesVersion());
    m.put("operatorVersion", s.operatorVersion());
    m.put("logsSince", since.toString());
    m.put("counts", counts);
    m.put("entries", s.entries());
    m.put("failures", s.failures());
    return Serialization.asJson(m) + "\n";
  }

  /** This build's version: the tag of the driver image its versions table names. */
  static String operatorVersion() {
    try {
      String image = VersionsTable.load().driverImage();
      return image.substring(image.lastIndexOf(':') + 1);
    } catch (RuntimeException e) {
      return "unknown";
    }
  }

  static String driverName(StorageCluster sc) {
    DriverSpec d = sc.getSpec() == null ? null : sc.getSpec().getDriver();
    return d == null || d.getName() == null ? DriverSpec.DEFAULT_NAME : d.getName();
  }

  /** Objects the operator creates (managed-by label) or the chart installs (its name label). */
  static boolean ownedBySoko(HasMetadata o) {
    Map<String, String> labels = o.getMetadata().getLabels();
    return labels != null
        && (Names.MANAGER.equals(labels.get(Names.LABEL_MANAGED_BY))
            || OPERATOR_POD_VALUE.equals(labels.get(OPERATOR_POD_LABEL)));
  }

  private static String label(HasMetadata o, String key) {
    Map<String, String> labels = o.getMetadata().getLabels();
    return labels == null ? null : labels.get(key);
  }

  private static String podName(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /** The failure and, when it has one, the reason below it (a refused connection, a timeout). */
  private static String message(Throwable e) {
    String m = e.getMessage();
    String own =
        e instanceof IOException && m != null
            ? m.strip()
            : e.getClass().getSimpleName()
                + (m == null ? "" : ": " + m.strip().lines().findFirst().orElse(""));
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root == e || root.getMessage() == null || own.contains(root.getMessage().strip())) {
      return own;
    }
    return own + " (" + root.getClass().getSimpleName() + ": " + root.getMessage().strip() + ")";
  }
}

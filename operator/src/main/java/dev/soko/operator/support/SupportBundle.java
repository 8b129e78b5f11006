package dev.soko.operator.support;

import dev.soko.api.v1alpha1.DriverSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.Kind;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * Which kinds, and which of their objects, come from the operator's {@link KindRegistry} (each
 * kind's {@link Kind.Bundle}): one list of kinds for the operator and the bundle.
 *
 * <p>Every step that fails (a forbidden list, a pod without logs, a node whose exec hangs) is
 * recorded in the archive, never fatal: a bundle is most needed when the cluster is least healthy.
 * Secrets are never listed, and every object goes through {@link Redaction}. Logs are copied as
 * they are: the operator and the driver do not log credentials.
 */
public final class SupportBundle {
  /** The label of the operator's own pods, from the Helm chart's selector labels. */
  public static final String OPERATOR_POD_LABEL = "app.kubernetes.io/name";

  public static final String OPERATOR_POD_VALUE = "soko-operator";

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
  private final BundleSink sink =
      new BundleSink() {
        @Override
        public void add(String entry, String text) {
          SupportBundle.this.add(entry, text);
        }

        @Override
        public void addFile(String entry, Path file) throws IOException {
          tar.add(entry, file);
        }

        @Override
        public void failed(String failure) {
          failures.add(failure);
        }

        @Override
        public void count(String kind) {
          SupportBundle.this.count(kind);
        }

        @Override
        public void note(String text) {
          SupportBundle.this.note(text);
        }
      };

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
      tar.add("summary.txt", SummaryFiles.summaryText(summary, since, counts));
      tar.add("manifest.json", SummaryFiles.manifest(summary, since, counts));
      return summary;
    } finally {
      tar = null;
      executor.shutdownNow();
    }
  }

  private void collectAll() {
    ObjectCollector objects = new ObjectCollector(client, sink);
    List<StorageCluster> clusters =
        objects.list("cluster", KindRegistry.STORAGE_CLUSTER, o -> true).stream()
            .map(StorageCluster.class::cast)
            .toList();
    Set<String> drivers = new LinkedHashSet<>();
    Set<String> operands = new LinkedHashSet<>();
    for (StorageCluster sc : clusters) {
      drivers.add(driverName(sc));
      if (sc.getSpec() != null && sc.getSpec().getNamespace() != null) {
        operands.add(sc.getSpec().getNamespace());
      }
    }
    objects.collectClusterScoped(drivers);
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
      objects.collectNamespace(ns);
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
    PodLogs logs = new PodLogs(client, since, sink);
    for (Pod pod : logged) {
      logs.collect(pod);
    }
    new NodeViews(client, execTimeout, executor, sink)
        .collect(
            operandPods.stream()
                .filter(p -> Names.NODE.equals(label(p, "app.kubernetes.io/component")))
                .toList());
  }

  private <T> T attempt(String what, Supplier<T> step) {
    return sink.attempt(what, step);
  }

  private void add(String entry, String text) {
    try {
      tar.add(entry, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void note(String text) {
    counts.merge("(" + text + ")", 0, Integer::sum);
  }

  private void count(String kind) {
    counts.merge(kind, 1, Integer::sum);
  }

  /** This build's version: the release its versions table names. */
  static String operatorVersion() {
    try {
      return VersionsTable.load().release();
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

  static String label(HasMetadata o, String key) {
    Map<String, String> labels = o.getMetadata().getLabels();
    return labels == null ? null : labels.get(key);
  }

  static String podName(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /** The failure and, when it has one, the reason below it (a refused connection, a timeout). */
  static String message(Throwable e) {
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

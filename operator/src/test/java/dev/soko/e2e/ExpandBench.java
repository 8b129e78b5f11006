package dev.soko.e2e;

import static dev.soko.e2e.BenchOutput.loadAverage;
import static dev.soko.e2e.BenchOutput.progress;
import static dev.soko.e2e.BenchOutput.seconds;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How long an online growth takes to reach the pod (hack/bench-expand.sh), on the local cluster
 * with the chart's default install: for an xfs claim and a block claim (and an ext4 claim where the
 * node's root holds CAP_SYS_RESOURCE, which growing a mounted ext4 needs), each growth timed from
 * the PVC's patch to the pod seeing the new size (the filesystem's size in {@code df}, or the
 * device's in {@code blockdev}), first with the growth handed to the volume's node
 * (features.immediateGrowth, the default), then with the kubelet's path forced (immediateGrowth
 * false, the controller rolled out with it and its resizer leading again).
 *
 * <p>Each mode has {@code bench.growths} claims (default 20), each with its own pod. With the
 * node's path the claims grow one after another, each timed alone. With the kubelet's path they
 * grow all at once: the kubelet grows a pod's volumes when it next syncs that pod, about once a
 * minute and independently per pod, so a growth's wait does not depend on the others, and 20 of
 * them in turn would take 20 minutes per mode. Those pods are then read in turn, so a growth's time
 * is known to within one pass over the pods (the table gives the pass). Which path each growth took
 * is checked: the claims the kubelet grew are the ones with its FileSystemResizeSuccessful event.
 *
 * <p>Arguments: the modes to measure ({@code xfs}, {@code block}, {@code ext4}; default all three).
 * Prints a Markdown table on stdout, progress on stderr.
 */
public final class ExpandBench {
  private static final String NAMESPACE = "bench-expand";
  private static final long MIB = 1024 * 1024;
  private static final long STEP = 32 * MIB;
  private static final int CAP_SYS_RESOURCE = 24;
  private static final Duration LONG = Duration.ofMinutes(10);
  private static final Duration GROWTH_TIMEOUT = Duration.ofMinutes(5);
  private static final String KUBELET_GREW = "FileSystemResizeSuccessful";

  /** A kind of claim: its class, first size and how its pod reads the size. */
  enum Mode {
    XFS(DefaultInstall.XFS, 320, false),
    BLOCK(DefaultInstall.XFS, 64, true),
    EXT4(DefaultInstall.EXT4, 64, false);

    final String storageClass;
    final long firstBytes;
    final boolean block;

    Mode(String storageClass, long firstMib, boolean block) {
      this.storageClass = storageClass;
      this.firstBytes = firstMib * MIB;
      this.block = block;
    }

    String key() {
      return name().toLowerCase(Locale.ROOT);
    }

    String claim(int i) {
      return String.format(Locale.ROOT, "%s-%02d", key(), i);
    }
  }

  /** The two paths a growth can take. */
  enum GrowthPath {
    NODE("node (immediateGrowth: true)"),
    KUBELET("kubelet (immediateGrowth: false)");

    final String shown;

    GrowthPath(String shown) {
      this.shown = shown;
    }
  }

  record Row(
      Mode mode,
      GrowthPath path,
      List<Double> seconds,
      int grewByKubelet,
      double pass,
      String load,
      String skipped) {}

  private final KubernetesClient client;
  private final Workloads apps;
  private final Installed installed;
  private final int growths;
  private final Map<String, Long> sizes = new HashMap<>();

  private ExpandBench(LocalCluster cluster, KubernetesClient client, int growths) {
    this.client = client;
    this.apps = new Workloads(client, NAMESPACE, cluster.imageRegistry);
    this.installed = new Installed(client);
    this.growths = growths;
  }

  public static void main(String[] args) throws Exception {
    int growths = Integer.getInteger("bench.growths", 20);
    List<Mode> modes =
        args.length == 0
            ? List.of(Mode.values())
            : Arrays.stream(args).map(a -> Mode.valueOf(a.toUpperCase(Locale.ROOT))).toList();
    LocalCluster cluster = LocalCluster.fromEnvironment();
    try (KubernetesClient client = cluster.client()) {
      DefaultInstall.helmInstall(cluster);
      DefaultInstall.awaitReady(client, NAMESPACE);
      ExpandBench bench = new ExpandBench(cluster, client, growths);
      try {
        String ext4Refusal = ext4Refusal();
        List<Mode> measured =
            modes.stream().filter(m -> m != Mode.EXT4 || ext4Refusal.isEmpty()).toList();
        bench.createClaims(measured);
        List<Row> rows = new ArrayList<>();
        for (GrowthPath path : GrowthPath.values()) {
          bench.immediateGrowth(path == GrowthPath.NODE);
          for (Mode mode : modes) {
            rows.add(
                measured.contains(mode)
                    ? bench.round(mode, path)
                    : new Row(mode, path, List.of(), 0, 0, "", ext4Refusal));
          }
        }
        System.out.print(table(rows));
      } finally {
        // The StorageCluster refuses its deletion while volumes of its driver exist.
        bench.deleteClaims();
        DefaultInstall.uninstall(cluster, client, NAMESPACE, LONG);
      }
    }
  }

  /**
   * Why a mounted ext4 cannot grow online here, or empty when it can: resize2fs of a mounted ext4
   * reserves blocks, which needs CAP_SYS_RESOURCE, and the nodes' root is this process's root.
   */
  static String ext4Refusal() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("CapEff:")) {
        long caps = Long.parseUnsignedLong(line.substring("CapEff:".length()).strip(), 16);
        return (caps & (1L << CAP_SYS_RESOURCE)) != 0
            ? ""
            : "skipped: root here lacks CAP_SYS_RESOURCE, which growing a mounted ext4 needs"
                + " (the kernel refuses it, so neither path can)";
      }
    }
    return "skipped: the capabilities of root here cannot be read";
  }

  /** Every mode's claims, each with its own pod, created at once and awaited running. */
  private void createClaims(List<Mode> modes) {
    apps.createNamespace();
    for (Mode mode : modes) {
      for (int i = 0; i < growths; i++) {
        String name = mode.claim(i);
        apps.create(apps.claim(name, mode.storageClass, mode.firstBytes / MIB + "Mi", mode.block));
        apps.create(apps.pod(name, name, mode.block, false));
      }
    }
    for (Mode mode : modes) {
      for (int i = 0; i < growths; i++) {
        apps.awaitRunning(mode.claim(i), LONG);
        sizes.put(mode.claim(i), mode.firstBytes);
      }
    }
    progress("%d claims with their pods running", modes.size() * growths);
  }

  /** Deletes the namespace, the claims with it, and waits until their volumes are gone. */
  private void deleteClaims() {
    List<String> volumes =
        client.persistentVolumeClaims().inNamespace(NAMESPACE).list().getItems().stream()
            .map(c -> c.getSpec().getVolumeName())
            .filter(Objects::nonNull)
            .toList();
    client.namespaces().withName(NAMESPACE).delete();
    for (String pv : volumes) {
      Await.until(
          "PV " + pv + " deleted",
          LONG,
          () -> client.persistentVolumes().withName(pv).get(),
          Objects::isNull);
    }
  }

  private Row round(Mode mode, GrowthPath path) throws Exception {
    String load = loadAverage();
    Set<String> grewBefore = claimsTheKubeletGrew();
    List<Double> seconds = new ArrayList<>();
    double pass = 0;
    if (path == GrowthPath.NODE) {
      for (int i = 0; i < growths; i++) {
        String claim = mode.claim(i);
        long before = seen(mode, claim);
        long target = sizes.get(claim) + STEP;
        long started = System.nanoTime();
        apps.resize(claim, target / MIB + "Mi");
        Await.until(
            "pod " + claim + " sees its claim grown to " + target,
            GROWTH_TIMEOUT,
            Duration.ofMillis(100),
            () -> seen(mode, claim),
            size -> grown(mode, before, size, target));
        seconds.add(seconds(started));
        sizes.put(claim, target);
        progress("%s via %s: growth %d in %.2f s", mode.key(), path, i + 1, last(seconds));
      }
    } else {
      Map<String, Long> before = new LinkedHashMap<>();
      for (int i = 0; i < growths; i++) {
        before.put(mode.claim(i), seen(mode, mode.claim(i)));
      }
      Map<String, Long> started = new LinkedHashMap<>();
      for (String claim : before.keySet()) {
        started.put(claim, System.nanoTime());
        apps.resize(claim, (sizes.get(claim) + STEP) / MIB + "Mi");
      }
      long deadline = System.nanoTime() + GROWTH_TIMEOUT.toNanos();
      int passes = 0;
      long firstPass = System.nanoTime();
      while (!started.isEmpty()) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "no pod saw its claim grown within " + GROWTH_TIMEOUT + ": " + started.keySet());
        }
        for (String claim : List.copyOf(started.keySet())) {
          long target = sizes.get(claim) + STEP;
          if (grown(mode, before.get(claim), seen(mode, claim), target)) {
            seconds.add(seconds(started.remove(claim)));
            sizes.put(claim, target);
            progress("%s via %s: %s grown in %.1f s", mode.key(), path, claim, last(seconds));
          }
        }
        passes++;
      }
      pass = seconds(firstPass) / passes;
    }
    Set<String> grew = claimsTheKubeletGrew();
    grew.removeAll(grewBefore);
    return new Row(mode, path, seconds, grew.size(), pass, load, "");
  }

  private static boolean grown(Mode mode, long before, long size, long target) {
    // A filesystem shows less than its device (its own metadata): any growth is the new size.
    return mode.block ? size >= target : size > before;
  }

  /** The size the pod sees: its device's bytes, or its filesystem's in df. */
  private long seen(Mode mode, String pod) {
    if (mode.block) {
      return Long.parseLong(apps.sh(pod, "blockdev --getsize64 " + Workloads.DEVICE));
    }
    return Long.parseLong(apps.sh(pod, "df -k " + Workloads.MOUNT + " | awk 'NR == 2 {print $2}'"))
        * 1024;
  }

  /** The claims of this namespace that hold the kubelet's event for a growth it made. */
  private Set<String> claimsTheKubeletGrew() {
    return client.v1().events().inNamespace(NAMESPACE).list().getItems().stream()
        .filter(e -> KUBELET_GREW.equals(e.getReason()))
        .map(e -> e.getInvolvedObject().getName())
        .collect(Collectors.toSet());
  }

  /**
   * Sets features.immediateGrowth and waits until the controller runs with it: one controller pod,
   * ready, its driver's arguments as the setting says, and its resizer holding the leader's lease.
   */
  private void immediateGrowth(boolean immediate) {
    client
        .resources(StorageCluster.class)
        .withName(DefaultInstall.RELEASE)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"spec\": {\"features\": {\"immediateGrowth\": " + immediate + "}}}");
    Deployment deployment =
        Await.until(
            "the controller Deployment with immediateGrowth " + immediate,
            LONG,
            installed::controllerDeployment,
            d -> rendersKubeletPath(d) == !immediate);
    Map<String, String> labels = deployment.getSpec().getSelector().getMatchLabels();
    Pod pod =
        Await.until(
                "one controller pod, ready, with immediateGrowth " + immediate,
                LONG,
                () -> client.pods().inNamespace(DefaultInstall.SYSTEM).withLabels(labels).list(),
                list ->
                    list.getItems().size() == 1
                        && isReady(list.getItems().get(0))
                        && runsKubeletPath(list.getItems().get(0)) == !immediate)
            .getItems()
            .get(0);
    String name = pod.getMetadata().getName();
    Await.until(
        "the resizer of controller pod " + name + " leading",
        LONG,
        () ->
            client.leases().inNamespace(DefaultInstall.SYSTEM).list().getItems().stream()
                .filter(l -> l.getMetadata().getName().contains("resizer"))
                .toList(),
        leases -> !leases.isEmpty() && leases.stream().allMatch(l -> heldBy(l, name)));
    progress("controller %s runs with immediateGrowth %s", name, immediate);
  }

  private static boolean heldBy(Lease lease, String pod) {
    String holder = lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
    return holder != null && holder.startsWith(pod);
  }

  private static boolean rendersKubeletPath(Deployment d) {
    return d.getSpec().getTemplate().getSpec().getContainers().stream()
        .anyMatch(c -> c.getArgs() != null && c.getArgs().contains("--immediate-growth=false"));
  }

  private static boolean runsKubeletPath(Pod p) {
    return p.getSpec().getContainers().stream()
        .anyMatch(c -> c.getArgs() != null && c.getArgs().contains("--immediate-growth=false"));
  }

  private static boolean isReady(Pod p) {
    return p.getMetadata().getDeletionTimestamp() == null
        && p.getStatus() != null
        && p.getStatus().getConditions() != null
        && p.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  static String table(List<Row> rows) {
    StringBuilder out = new StringBuilder();
    out.append(
        "| claim | growth's path | growths | p50 | p99 | max | grown by the kubelet | pods read"
            + " every | target (p50 ≤ 5 s, p99 ≤ 10 s) | load |\n");
    out.append("|---|---|---|---|---|---|---|---|---|---|\n");
    for (Row r : rows) {
      if (!r.skipped().isEmpty()) {
        out.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | 0 | | | | | | %s | |%n",
                r.mode().key(),
                r.path().shown,
                r.skipped()));
        continue;
      }
      List<Double> sorted = r.seconds().stream().sorted().toList();
      double p50 = percentile(sorted, 50);
      double p99 = percentile(sorted, 99);
      String verdict =
          r.path() == GrowthPath.NODE ? (p50 <= 5 && p99 <= 10 ? "met" : "missed") : "(baseline)";
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %.2f s | %.2f s | %.2f s | %d of %d | %s | %s | %s |%n",
              r.mode().key(),
              r.path().shown,
              sorted.size(),
              p50,
              p99,
              sorted.get(sorted.size() - 1),
              r.grewByKubelet(),
              sorted.size(),
              r.pass() == 0 ? "one at a time" : String.format(Locale.ROOT, "%.1f s", r.pass()),
              verdict,
              r.load()));
    }
    return out.toString();
  }

  /** The nearest-rank percentile of sorted values: of 20, p50 is the 10th and p99 the 20th. */
  static double percentile(List<Double> sorted, int p) {
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(rank, 1) - 1);
  }

  private static double last(List<Double> values) {
    return values.get(values.size() - 1);
  }
}

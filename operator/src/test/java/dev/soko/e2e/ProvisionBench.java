package dev.soko.e2e;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Provisioning at scale on the local cluster (hack/bench-provision.sh): for each claim count,
 * Soko's WaitForFirstConsumer class and local-path-provisioner's on the same nodes, N claims each
 * with a pod that mounts it, created at once; per claim PVC to Bound and PVC to pod Running, the
 * stages in between, and for Soko the deletion until every volume's image is gone from the pools
 * and their free space is back. Prints Markdown tables on stdout, progress on stderr.
 *
 * <p>Arguments: claim counts (e.g. {@code 100 300}). System properties: {@code bench.runs} (default
 * 1), {@code bench.soko} and {@code bench.localPath} (the two StorageClasses), {@code bench.size}
 * (each claim's request, default 32Mi), {@code bench.provisioners} (which of soko and local-path to
 * measure, default both).
 */
public final class ProvisionBench {
  static final String SOKO = "soko";
  static final String LOCAL_PATH = "local-path";
  static final Duration ROUND_TIMEOUT = Duration.ofMinutes(15);

  private ProvisionBench() {}

  public static void main(String[] args) throws Exception {
    int runs = Integer.getInteger("bench.runs", 1);
    String sokoClass = System.getProperty("bench.soko", DefaultInstall.EXT4);
    String localPathClass = System.getProperty("bench.localPath", "local-path");
    String size = System.getProperty("bench.size", "32Mi");
    List<String> provisioners =
        List.of(System.getProperty("bench.provisioners", SOKO + "," + LOCAL_PATH).split(","));
    List<Integer> counts = new ArrayList<>();
    for (String each : args) {
      counts.add(Integer.parseInt(each));
    }
    LocalCluster cluster = LocalCluster.fromEnvironment();
    try (KubernetesClient client = client(cluster)) {
      Readiness.awaitSoko(cluster, client, sokoClass);
      Readiness.awaitClass(client, localPathClass);
      List<RoundResult> results = new ArrayList<>();
      for (int run = 1; run <= runs; run++) {
        for (int count : counts) {
          if (provisioners.contains(SOKO)) {
            results.add(sokoRound(cluster, client, run, count, sokoClass, size));
          }
          if (provisioners.contains(LOCAL_PATH)) {
            results.add(localPathRound(cluster, client, run, count, localPathClass, size));
          }
        }
      }
      System.out.print(new ProvisionTables(results).markdown());
    }
  }

  private static RoundResult sokoRound(
      LocalCluster cluster, KubernetesClient client, int run, int count, String cls, String size)
      throws Exception {
    String load = Readiness.awaitQuiet();
    ProvisionRound round = round(cluster, client, SOKO, run, count, cls, size);
    PoolDrain drain = new PoolDrain(cluster);
    drain.before();
    DriverCalls before = DriverCalls.read(client);
    round.provision();
    round.delete();
    drain.awaitDrained(System.nanoTime() + ROUND_TIMEOUT.toNanos());
    String calls = DriverCalls.read(client).since(before);
    System.err.printf(
        "%s: pools drained, %d bytes of free space still missing%n",
        round.count(), drain.missingBytes());
    return new RoundResult(SOKO, run, load, round, drain, calls);
  }

  private static RoundResult localPathRound(
      LocalCluster cluster, KubernetesClient client, int run, int count, String cls, String size)
      throws Exception {
    String load = Readiness.awaitQuiet();
    ProvisionRound round = round(cluster, client, LOCAL_PATH, run, count, cls, size);
    round.provision();
    round.delete();
    return new RoundResult(LOCAL_PATH, run, load, round, null, null);
  }

  private static ProvisionRound round(
      LocalCluster cluster,
      KubernetesClient client,
      String provisioner,
      int run,
      int count,
      String cls,
      String size) {
    String namespace = "bench-%s-%d-r%d".formatted(provisioner, count, run);
    System.err.printf("round %s: %d claims of class %s%n", namespace, count, cls);
    return new ProvisionRound(
        client,
        new Workloads(client, namespace, cluster.imageRegistry),
        cls,
        size,
        count,
        ROUND_TIMEOUT);
  }

  /**
   * The cluster's client, allowed as many parallel requests as the round's creators make (the
   * client's default of 5 per host would pace the creation instead of the cluster).
   */
  private static KubernetesClient client(LocalCluster cluster) throws Exception {
    Config config = Config.fromKubeconfig(Files.readString(cluster.kubeconfig));
    config.setMaxConcurrentRequests(2 * ProvisionRound.CREATORS);
    config.setMaxConcurrentRequestsPerHost(2 * ProvisionRound.CREATORS);
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  /**
   * What one round measured. {@code drain} and {@code driverCalls} (the node plugins' CSI calls
   * during the round) are null for a provisioner other than Soko.
   */
  record RoundResult(
      String provisioner,
      int run,
      String load,
      ProvisionRound round,
      PoolDrain drain,
      String driverCalls) {}

  /** What must hold before a round starts. */
  static final class Readiness {
    static final Duration SETTLE = Duration.ofSeconds(10);
    static final Duration SETTLE_LIMIT = Duration.ofSeconds(120);

    private Readiness() {}

    /**
     * Installs Soko with the default install unless its StorageCluster exists, then waits until it
     * is Ready and every node publishes capacity for {@code storageClass}.
     */
    static void awaitSoko(LocalCluster cluster, KubernetesClient client, String storageClass)
        throws Exception {
      if (client.resources(StorageCluster.class).withName(DefaultInstall.RELEASE).get() == null) {
        // The default install, with the node plugins' metrics, which say what each CSI call cost.
        String spec =
            DefaultInstall.spec() + "driver:\n  metricsPort: " + DriverCalls.METRICS_PORT + "\n";
        DefaultInstall.helm(
            cluster,
            "install",
            LocalCluster.REPO.resolve("helm/soko"),
            DefaultInstall.values(cluster.imageRegistry, spec));
      }
      Installed installed = new Installed(client);
      Await.until(
          "StorageCluster " + DefaultInstall.RELEASE + " Ready=True",
          Duration.ofSeconds(300),
          installed::storageCluster,
          sc -> sc != null && "True".equals(Installed.condition(sc, "Ready")));
      Await.until(
          "capacity of class " + storageClass + " on every node",
          Duration.ofSeconds(180),
          () ->
              client
                  .storage()
                  .v1()
                  .csiStorageCapacities()
                  .inAnyNamespace()
                  .list()
                  .getItems()
                  .stream()
                  .filter(c -> storageClass.equals(c.getStorageClassName()))
                  .filter(
                      c ->
                          c.getCapacity() != null
                              && c.getCapacity().getNumericalAmount().signum() > 0)
                  .count(),
          n -> n >= cluster.nodes.size());
    }

    static void awaitClass(KubernetesClient client, String storageClass) {
      Await.until(
          "StorageClass " + storageClass,
          Duration.ofSeconds(60),
          () -> client.storage().v1().storageClasses().withName(storageClass).get(),
          sc -> sc != null);
    }

    /**
     * Waits until the last round's deletion has settled: at least {@link #SETTLE}, then until the
     * one-minute load is below the machine's cores or {@link #SETTLE_LIMIT} has passed. Returns the
     * load average then (the first three fields of /proc/loadavg).
     */
    static String awaitQuiet() throws Exception {
      long deadline = System.nanoTime() + SETTLE_LIMIT.toNanos();
      Thread.sleep(SETTLE.toMillis());
      int cores = Runtime.getRuntime().availableProcessors();
      String[] fields = loadAverage();
      while (Double.parseDouble(fields[0]) >= cores && System.nanoTime() < deadline) {
        Thread.sleep(1000);
        fields = loadAverage();
      }
      return fields[0] + " " + fields[1] + " " + fields[2];
    }

    private static String[] loadAverage() throws Exception {
      return Files.readString(Path.of("/proc/loadavg")).split(" ");
    }
  }
}

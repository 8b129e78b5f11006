package dev.soko.operator.bench;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Measures the operator jar as users run it, against a real kube-apiserver: start to first
 * reconcile, idle RSS, creation-to-applied, RSS after 20 StorageClusters. Run by
 * hack/bench-operator.sh, which prints the table this writes to stdout.
 */
public final class OperatorBench {
  private OperatorBench() {}

  public static void main(String[] args) throws Exception {
    // The launcher (operator/bin/soko-operator) runs the jar with the measured JVM flags.
    Path launcher = Path.of(args[0]);
    Path dir = Path.of(args[1]);
    KubeAPIServer server =
        new KubeAPIServer(
            KubeAPIServerConfigBuilder.anAPIServerConfig()
                .withTestDir(dir.toString())
                .withApiServerVersion(args[2])
                .withOfflineMode(true)
                .withUpdateKubeConfig(false)
                .withApiServerFlag("--bind-address", "127.0.0.1")
                .build());
    server.start();
    Process operator = null;
    try {
      Path kubeconfig = Files.createTempFile("soko-bench", ".kubeconfig");
      kubeconfig.toFile().deleteOnExit();
      Files.writeString(kubeconfig, server.getKubeConfigYaml());
      KubernetesClient admin =
          new KubernetesClientBuilder()
              .withConfig(Config.fromKubeconfig(server.getKubeConfigYaml()))
              .build();
      apply(admin, "/META-INF/fabric8/storageclusters.soko.dev-v1.yml");
      Thread.sleep(2000); // CRD established
      warmUp(admin, launcher, kubeconfig, dir);
      admin.resource(cluster("bench-0")).create();

      long start = System.nanoTime();
      operator = startOperator(launcher, kubeconfig, dir.resolve("operator-bench.log"));
      waitApplied(admin, "bench-0");
      double startSeconds = (System.nanoTime() - start) / 1e9;
      Thread.sleep(10_000);
      long idleRss = rssKiB(operator.pid());

      List<Double> applyTimes = new ArrayList<>();
      for (int i = 1; i < 20; i++) {
        long t0 = System.nanoTime();
        admin.resource(cluster("bench-" + i)).create();
        waitApplied(admin, "bench-" + i);
        applyTimes.add((System.nanoTime() - t0) / 1e9);
      }
      Thread.sleep(5_000);
      long rss20 = rssKiB(operator.pid());
      applyTimes.sort(Double::compare);

      System.out.println("| measurement | value | target |");
      System.out.println("|---|---|---|");
      System.out.printf(
          "| operator start to first reconcile (JVM start included, class-data archive"
              + " present) | %.2f s | < 3 s |%n",
          startSeconds);
      System.out.printf("| RSS idle (1 StorageCluster) | %d MiB | < 160 MiB |%n", idleRss / 1024);
      System.out.printf("| RSS after 20 StorageClusters | %d MiB | |%n", rss20 / 1024);
      System.out.printf(
          "| creation to status applied, median of 19 | %.2f s | < 2 s |%n",
          applyTimes.get(applyTimes.size() / 2));
      System.out.printf(
          "| creation to status applied, max of 19 | %.2f s | |%n",
          applyTimes.get(applyTimes.size() - 1));
    } finally {
      if (operator != null) {
        operator.destroy();
      }
      server.stop();
    }
  }

  /**
   * One run before the measured one, as the image's build-time training run does: the launcher
   * writes its class-data archive when the operator exits, so the measured start maps it. The
   * warm-up object is removed afterwards (finalizer cleared: no operator runs to honour it) so the
   * measured run starts with a clean cluster.
   */
  private static void warmUp(KubernetesClient admin, Path launcher, Path kubeconfig, Path dir)
      throws Exception {
    admin.resource(cluster("warm-up")).create();
    Process warm = startOperator(launcher, kubeconfig, dir.resolve("operator-warm-up.log"));
    try {
      waitApplied(admin, "warm-up");
    } finally {
      warm.destroy(); // SIGTERM: the JVM's normal exit path writes the archive
      if (!warm.waitFor(60, TimeUnit.SECONDS)) {
        warm.destroyForcibly();
        throw new IllegalStateException("the warm-up operator did not exit within 60 s of SIGTERM");
      }
    }
    admin.resources(StorageCluster.class).withName("warm-up").delete();
    admin
        .resources(StorageCluster.class)
        .withName("warm-up")
        .edit(
            sc -> {
              sc.getMetadata().setFinalizers(List.of());
              return sc;
            });
    admin
        .resources(StorageCluster.class)
        .withName("warm-up")
        .waitUntilCondition(Objects::isNull, 30, TimeUnit.SECONDS);
  }

  private static Process startOperator(Path launcher, Path kubeconfig, Path log) throws Exception {
    return new ProcessBuilder(
            launcher.toString(),
            "run",
            "--kubeconfig",
            kubeconfig.toString(),
            "--no-leader-election",
            "--health-address",
            "127.0.0.1:0")
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
  }

  private static StorageCluster cluster(String name) {
    StorageCluster sc = new StorageCluster();
    sc.setMetadata(new ObjectMetaBuilder().withName(name).build());
    sc.setSpec(new dev.soko.api.v1alpha1.StorageClusterSpec());
    sc.getSpec().setNamespace("soko-" + name);
    sc.getSpec().getDriver().setName(name + ".csi.soko.dev");
    PoolSpec pool = new PoolSpec();
    pool.setName("main");
    pool.setPath("/var/lib/soko/main");
    sc.getSpec().getPools().add(pool);
    return sc;
  }

  private static void waitApplied(KubernetesClient admin, String name) throws InterruptedException {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (System.nanoTime() < deadline) {
      StorageCluster sc = admin.resources(StorageCluster.class).withName(name).get();
      if (sc != null && sc.getStatus() != null && sc.getStatus().getAppliedObjects() != null) {
        return;
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException(name + " was not applied within 120 s");
  }

  private static long rssKiB(long pid) throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS for pid " + pid);
  }

  private static void apply(KubernetesClient admin, String resource) throws Exception {
    try (InputStream in = OperatorBench.class.getResourceAsStream(resource)) {
      for (HasMetadata o : admin.load(in).items()) {
        admin.resource(o).fieldManager("bench").forceConflicts().serverSideApply();
      }
    }
  }
}

package dev.soko.operator.cli;

import dev.soko.operator.crds.CrdUpgrade;
import dev.soko.operator.runtime.HealthServer;
import dev.soko.operator.runtime.SokoOperator;
import io.fabric8.kubernetes.client.Config;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Runs the operator against a cluster (in-cluster config or a kubeconfig). */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run the operator: in-cluster, or with --kubeconfig / $KUBECONFIG.")
public final class RunCommand implements Callable<Integer> {
  @Option(
      names = "--kubeconfig",
      description = "kubeconfig file (default: in-cluster or $KUBECONFIG)")
  Path kubeconfig;

  @Option(
      names = "--leader-election-namespace",
      description =
          "Namespace of the leader-election Lease (default: the pod's namespace when in a cluster)")
  String leaseNamespace;

  @Option(names = "--no-leader-election", description = "Run without leader election")
  boolean noLeaderElection;

  @Option(
      names = "--health-address",
      defaultValue = "0.0.0.0:8080",
      description = "HOST:PORT of /healthz, /readyz and /metrics (default: ${DEFAULT-VALUE})")
  String healthAddress;

  @Option(
      names = "--image-registry",
      defaultValue = "${env:SOKO_IMAGE_REGISTRY}",
      description =
          "Registry (host and optional path prefix) of the driver and sidecar images for"
              + " StorageClusters without spec.images.registry (default: $SOKO_IMAGE_REGISTRY;"
              + " unset: images stay unqualified)")
  String imageRegistry;

  @Option(
      names = "--resync-interval",
      defaultValue = "3m",
      converter = DurationConverter.class,
      description =
          "Reconcile every StorageCluster at least this often, e.g. 90s, 3m, 1h; it re-reads the"
              + " server version, so a cluster upgrade changes the sidecars (default:"
              + " ${DEFAULT-VALUE})")
  Duration resyncInterval;

  @Option(
      names = "--rollout-deadline",
      defaultValue = "10m",
      converter = DurationConverter.class,
      description =
          "A node plugin rollout whose nodes do not serve and whose counts have not moved for this"
              + " long makes the StorageCluster Degraded (RolloutStalled), as a Deployment's"
              + " progressDeadlineSeconds does (default: ${DEFAULT-VALUE})")
  Duration rolloutDeadline;

  @Option(
      names = "--upgrade-crds",
      description =
          "At start, server-side apply Soko's CRDs of this release where the cluster holds older"
              + " ones (never a newer one), since Helm never upgrades a chart's CRDs; the Helm"
              + " chart sets it, the OLM bundle does not (OLM owns the CRDs there)")
  boolean upgradeCrds;

  @Override
  public Integer call() throws Exception {
    Config config =
        kubeconfig != null
            ? Config.fromKubeconfig(Files.readString(kubeconfig))
            : Config.autoConfigure(null);
    String lease = noLeaderElection ? null : leaseNamespace();
    int colon = healthAddress.lastIndexOf(':');
    InetSocketAddress address =
        new InetSocketAddress(
            healthAddress.substring(0, colon),
            Integer.parseInt(healthAddress.substring(colon + 1)));
    CountDownLatch stopped = new CountDownLatch(1);
    try (SokoOperator operator =
            new SokoOperator(config, lease, null, imageRegistry, resyncInterval, rolloutDeadline);
        HealthServer health =
            new HealthServer(address, operator::isRunning, operator::isHealthy, operator::scrape)) {
      Runtime.getRuntime().addShutdownHook(new Thread(stopped::countDown, "soko-shutdown"));
      if (upgradeCrds) {
        upgradeCrds(operator);
      }
      operator.start();
      System.err.println("soko-operator started; health on port " + health.port());
      stopped.await();
    }
    return 0;
  }

  /**
   * Before the reconciler starts, so that it never writes through an older schema; an API error
   * ends the start, loudly, rather than leave the fields of an older CRD silently pruned.
   */
  private static void upgradeCrds(SokoOperator operator) {
    try {
      new CrdUpgrade(operator.client()).run();
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "could not upgrade Soko's CRDs ("
              + e.getMessage()
              + "); apply helm/soko/crds/ by hand and start without --upgrade-crds (chart value"
              + " crds.upgrade=false)",
          e);
    }
  }

  private String leaseNamespace() throws Exception {
    if (leaseNamespace != null) {
      return leaseNamespace;
    }
    Path pod = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
    if (Files.exists(pod)) {
      return Files.readString(pod).trim();
    }
    throw new IllegalArgumentException(
        "outside a cluster pass --leader-election-namespace NS or --no-leader-election");
  }
}

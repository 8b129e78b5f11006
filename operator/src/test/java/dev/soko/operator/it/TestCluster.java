package dev.soko.operator.it;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.OperatorInstall;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.runtime.SokoOperator;
import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One real kube-apiserver + etcd (kube-api-test, offline, RBAC on, loopback) for all ITs of a JVM,
 * with the CRDs and the operator's RBAC file applied, and the operator running as its
 * ServiceAccount through impersonation: a missing permission shows up as a failed test.
 */
final class TestCluster {
  static final String VERSION = "1.36.3";
  static final String DEFAULT_IMAGE_REGISTRY = "registry.example/k8s";

  /** Long, so that a test observing a prompt update proves a watch caused it. */
  static final java.time.Duration RESYNC = java.time.Duration.ofMinutes(10);

  /**
   * Short, so that RolloutStallIT sees a stall within seconds; longer than any other IT keeps a
   * node plugin pod not ready.
   */
  static final java.time.Duration ROLLOUT_DEADLINE = java.time.Duration.ofSeconds(15);

  private static TestCluster instance;

  final KubeAPIServer server;
  final KubernetesClient admin;
  final SokoOperator operator;
  final AtomicReference<KubernetesVersion> version =
      new AtomicReference<>(KubernetesVersion.parse(VERSION));

  private TestCluster() throws Exception {
    Path dir = OperatorInstall.toolCache().resolve("kube-api-test");
    Path binaries = dir.resolve("k8s").resolve(VERSION + "-linux-amd64");
    for (String bin : List.of("etcd", "kube-apiserver", "kubectl")) {
      if (!Files.isExecutable(binaries.resolve(bin))) {
        throw new IllegalStateException(
            binaries.resolve(bin) + " is missing: run `hack/tools.sh kube-api-test` first");
      }
    }
    server =
        new KubeAPIServer(
            KubeAPIServerConfigBuilder.anAPIServerConfig()
                .withTestDir(dir.toString())
                .withApiServerVersion(VERSION)
                .withOfflineMode(true)
                .withUpdateKubeConfig(false)
                .withApiServerFlag("--bind-address", "127.0.0.1")
                .withApiServerFlag("--advertise-address", "127.0.0.1")
                .build());
    server.start();
    Config adminConfig = Config.fromKubeconfig(server.getKubeConfigYaml());
    admin = new KubernetesClientBuilder().withConfig(adminConfig).build();
    OperatorInstall.apply(admin, "it-admin");

    Config operatorConfig = Config.fromKubeconfig(server.getKubeConfigYaml());
    operatorConfig.setImpersonateUsername(OperatorInstall.OPERATOR_USER);
    operatorConfig.setImpersonateGroups(OperatorInstall.OPERATOR_GROUPS.toArray(String[]::new));
    // The operator's default registry (--image-registry), which StorageClusters without
    // spec.images.registry use.
    operator =
        new SokoOperator(
            operatorConfig,
            "soko-system",
            version::get,
            DEFAULT_IMAGE_REGISTRY,
            RESYNC,
            ROLLOUT_DEADLINE);
    operator.start();
  }

  static synchronized TestCluster get() throws Exception {
    if (instance == null) {
      instance = new TestCluster();
      Runtime.getRuntime().addShutdownHook(new Thread(instance::stop, "test-cluster-stop"));
    }
    return instance;
  }

  /**
   * Stops the operator (given a few seconds: its informers may wait on a server that goes away) and
   * then etcd and kube-apiserver, so no process outlives the test JVM.
   */
  private void stop() {
    Thread closing = new Thread(operator::close, "operator-close");
    closing.setDaemon(true);
    closing.start();
    try {
      closing.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    server.stop();
  }

  StorageCluster get(String name) {
    return admin.resources(StorageCluster.class).withName(name).get();
  }
}

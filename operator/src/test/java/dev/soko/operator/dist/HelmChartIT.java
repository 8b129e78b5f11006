package dev.soko.operator.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.soko.operator.harness.OperatorInstall;
import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart installs, upgrades and uninstalls against a real kube-apiserver + etcd
 * (kube-api-test, offline, loopback) with the pinned helm binary, and installs exactly the objects
 * the operator's sources describe: the CRD, the RBAC file's rules, the operator Deployment and an
 * optional StorageCluster. Needs {@code hack/tools.sh kube-api-test helm}.
 */
class HelmChartIT {
  private static final String KUBERNETES = "1.36.3";
  private static final String NAMESPACE = "soko-system";
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  private static final Path CHART = REPO.resolve("helm/soko");

  private static KubeAPIServer server;
  private static KubernetesClient client;
  private static Path kubeconfig;
  private static Path helm;

  @BeforeAll
  static void start() throws IOException {
    Path cache = OperatorInstall.toolCache();
    helm = cache.resolve("bin/helm");
    Path binaries = cache.resolve("kube-api-test/k8s/" + KUBERNETES + "-linux-amd64");
    for (Path tool :
        List.of(
            helm,
            binaries.resolve("etcd"),
            binaries.resolve("kube-apiserver"),
            binaries.resolve("kubectl"))) {
      if (!Files.isExecutable(tool)) {
        throw new IllegalStateException(
            tool + " is missing: run `hack/tools.sh kube-api-test helm` first");
      }
    }
    server =
        new KubeAPIServer(
            KubeAPIServerConfigBuilder.anAPIServerConfig()
                .withTestDir(cache.resolve("kube-api-test").toString())
                .withApiServerVersion(KUBERNETES)
                .withOfflineMode(true)
                .withUpdateKubeConfig(false)
                .withApiServerFlag("--bind-address", "127.0.0.1")
                .withApiServerFlag("--advertise-address", "127.0.0.1")
                .build());
    server.start();
    kubeconfig = Files.createTempFile("soko-helm-it", ".kubeconfig");
    Files.writeString(kubeconfig, server.getKubeConfigYaml());
    client =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(server.getKubeConfigYaml()))
            .build();
  }

  @AfterAll
  static void stop() throws IOException {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.stop();
    }
    if (kubeconfig != null) {
      Files.deleteIfExists(kubeconfig);
    }
  }

  @Test
  void installUpgradeAndUninstall() throws Exception {
    helm(
        "install",
        "soko",
        CHART.toString(),
        "--create-namespace",
        "--set",
        "storageCluster.create=true");

    assertThat(
            client
                .apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName("storageclusters.soko.dev")
                .get())
        .as("CRD from the chart's crds/")
        .isNotNull();
    Deployment deployment = deployment();
    assertThat(deployment).as("operator Deployment").isNotNull();
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(1);
    assertThat(deployment.getSpec().getTemplate().getSpec().getServiceAccountName())
        .isEqualTo("soko-operator");
    assertThat(deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .isEqualTo("soko-operator:" + chartAppVersion());
    assertThat(client.serviceAccounts().inNamespace(NAMESPACE).withName("soko-operator").get())
        .isNotNull();
    ClusterRole role = client.rbac().clusterRoles().withName("soko-operator").get();
    assertThat(role.getRules()).as("rules of the operator's RBAC file").isEqualTo(rbacFileRules());
    assertThat(client.rbac().clusterRoleBindings().withName("soko-operator").get().getSubjects())
        .singleElement()
        .satisfies(s -> assertThat(s.getNamespace()).isEqualTo(NAMESPACE));
    GenericKubernetesResource cluster = storageCluster();
    assertThat(cluster).as("StorageCluster from values").isNotNull();
    assertThat(cluster.get("spec", "pools", 0, "name").toString()).isEqualTo("default");
    assertThat(metricsService()).as("metrics Service off by default").isNull();
    operatorPodMeetsTheRestrictedPodSecurityLevel(deployment);

    helm(
        "upgrade",
        "soko",
        CHART.toString(),
        "--reuse-values",
        "--set",
        "replicaCount=2",
        "--set",
        "metrics.service.enabled=true");

    assertThat(deployment().getSpec().getReplicas()).isEqualTo(2);
    assertThat(metricsService()).as("metrics Service after upgrade").isNotNull();

    helm("uninstall", "soko");

    assertThat(deployment()).as("Deployment after uninstall").isNull();
    assertThat(client.rbac().clusterRoles().withName("soko-operator").get()).isNull();
    assertThat(client.serviceAccounts().inNamespace(NAMESPACE).withName("soko-operator").get())
        .isNull();
    assertThat(metricsService()).isNull();
    assertThat(storageCluster()).as("StorageCluster after uninstall").isNull();
    assertThat(
            client
                .apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName("storageclusters.soko.dev")
                .get())
        .as("Helm keeps CRDs on uninstall, so volumes' definitions survive")
        .isNotNull();
  }

  /**
   * {@code helm install --create-namespace} makes a namespace at the cluster's default Pod Security
   * level, which hardened clusters set to baseline or restricted. The namespace is labelled
   * restricted and a pod from the Deployment's template is created with server-side dry run, so the
   * API server's Pod Security admission judges it (no kubelet needed).
   */
  private static void operatorPodMeetsTheRestrictedPodSecurityLevel(Deployment deployment) {
    client
        .namespaces()
        .withName(NAMESPACE)
        .edit(
            ns -> {
              ns.getMetadata().getLabels().put("pod-security.kubernetes.io/enforce", "restricted");
              return ns;
            });
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("soko-operator-dry-run")
            .withNamespace(NAMESPACE)
            .withLabels(deployment.getSpec().getTemplate().getMetadata().getLabels())
            .endMetadata()
            .withSpec(deployment.getSpec().getTemplate().getSpec())
            .build();
    assertThatCode(() -> client.pods().inNamespace(NAMESPACE).resource(pod).dryRun().create())
        .as("operator pod in a namespace enforcing restricted")
        .doesNotThrowAnyException();
  }

  private static Deployment deployment() {
    return client.apps().deployments().inNamespace(NAMESPACE).withName("soko-operator").get();
  }

  private static Object metricsService() {
    return client.services().inNamespace(NAMESPACE).withName("soko-operator-metrics").get();
  }

  private static GenericKubernetesResource storageCluster() {
    return client
        .genericKubernetesResources("soko.dev/v1alpha1", "StorageCluster")
        .withName("soko")
        .get();
  }

  private static String chartAppVersion() throws IOException {
    Map<?, ?> chart =
        Serialization.unmarshal(Files.readString(CHART.resolve("Chart.yaml")), Map.class);
    return chart.get("appVersion").toString();
  }

  private static List<?> rbacFileRules() throws IOException {
    try (InputStream in =
        Files.newInputStream(REPO.resolve("operator/src/main/resources/rbac/operator-rbac.yaml"))) {
      for (HasMetadata object : client.load(in).items()) {
        if (object instanceof ClusterRole role) {
          return role.getRules();
        }
      }
    }
    throw new IllegalStateException("the operator's RBAC file has no ClusterRole");
  }

  /** Runs helm against the test server; fails the test with helm's output on a non-zero exit. */
  private static void helm(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(helm.toString()));
    command.addAll(List.of(args));
    command.addAll(List.of("--namespace", NAMESPACE, "--kubeconfig", kubeconfig.toString()));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    // helm's output is small; reading it to the end before waiting cannot dead-lock.
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("helm " + String.join(" ", args) + " timed out");
    }
    assertThat(process.exitValue()).as("helm %s:%n%s", String.join(" ", args), output).isZero();
  }
}

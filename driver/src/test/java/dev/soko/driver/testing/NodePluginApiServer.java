package dev.soko.driver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real kube-apiserver (kube-api-test: offline, loopback, RBAC on) with the StorageNode CRD the
 * crd module generates and the node plugin's ServiceAccount bound to its pool-report rules, rule
 * for rule as the operator renders them (operator model/Rbac). The driver's ITs talk to it as the
 * node plugin does in a pod: with that account's token and the cluster CA ({@link #nodePlugin}).
 */
public final class NodePluginApiServer implements AutoCloseable {
  public static final String VERSION = "1.36.3";
  public static final String NAMESPACE = "soko";
  public static final String SERVICE_ACCOUNT = "node";
  private static final String CRD = "../crd/src/generated/crds/storagenodes.soko.dev-v1.yml";
  private static final String ROLE = "soko-node:pool-report";

  private final KubeAPIServer server;
  private final Config adminConfig;
  private final KubernetesClient admin;

  private NodePluginApiServer(KubeAPIServer server) {
    this.server = server;
    this.adminConfig = Config.fromKubeconfig(server.getKubeConfigYaml());
    this.admin = new KubernetesClientBuilder().withConfig(adminConfig).build();
  }

  /** Starts the server and lays out the CRD, namespace, ServiceAccount and its RBAC. */
  public static NodePluginApiServer start() throws Exception {
    String cache =
        System.getenv()
            .getOrDefault("SOKO_CACHE", System.getProperty("user.home") + "/.cache/soko");
    Path testDir = Path.of(cache, "kube-api-test");
    for (String bin : List.of("etcd", "kube-apiserver")) {
      assertThat(testDir.resolve("k8s").resolve(VERSION + "-linux-amd64").resolve(bin))
          .as("run `hack/tools.sh kube-api-test` first")
          .isExecutable();
    }
    KubeAPIServer server =
        new KubeAPIServer(
            KubeAPIServerConfigBuilder.anAPIServerConfig()
                .withTestDir(testDir.toString())
                .withApiServerVersion(VERSION)
                .withOfflineMode(true)
                .withUpdateKubeConfig(false)
                .withApiServerFlag("--bind-address", "127.0.0.1")
                .withApiServerFlag("--advertise-address", "127.0.0.1")
                .build());
    server.start();
    NodePluginApiServer started = new NodePluginApiServer(server);
    try {
      started.layOut();
    } catch (Exception | AssertionError e) {
      started.close();
      throw e;
    }
    return started;
  }

  public KubernetesClient admin() {
    return admin;
  }

  /**
   * The environment a node plugin pod gives the driver for API access (the ServiceAccount's token
   * and the cluster CA, written into {@code dir}), as {@code KubeApi.fromEnvironment} reads it.
   */
  public Map<String, String> nodePlugin(Path dir) throws Exception {
    String token =
        admin
            .serviceAccounts()
            .inNamespace(NAMESPACE)
            .withName(SERVICE_ACCOUNT)
            .tokenRequest(
                new TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(3600L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
    Path tokenFile = Files.writeString(dir.resolve("token"), token);
    Path ca = dir.resolve("ca.crt");
    if (adminConfig.getCaCertData() != null) {
      Files.write(ca, Base64.getDecoder().decode(adminConfig.getCaCertData()));
    } else {
      Files.copy(Path.of(adminConfig.getCaCertFile()), ca);
    }
    return Map.of(
        "SOKO_KUBE_API", adminConfig.getMasterUrl(),
        "SOKO_KUBE_TOKEN_FILE", tokenFile.toString(),
        "SOKO_KUBE_CA_FILE", ca.toString());
  }

  private void layOut() throws Exception {
    try (InputStream in = Files.newInputStream(Path.of(CRD))) {
      for (HasMetadata o : admin.load(in).items()) {
        admin.resource(o).serverSideApply();
      }
    }
    admin
        .apiextensions()
        .v1()
        .customResourceDefinitions()
        .withName("storagenodes.soko.dev")
        .waitUntilCondition(
            c ->
                c != null
                    && c.getStatus() != null
                    && c.getStatus().getConditions().stream()
                        .anyMatch(x -> "Established".equals(x.getType())),
            30,
            TimeUnit.SECONDS);
    admin
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .serverSideApply();
    admin
        .serviceAccounts()
        .inNamespace(NAMESPACE)
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName(SERVICE_ACCOUNT)
                .endMetadata()
                .build())
        .serverSideApply();
    admin
        .rbac()
        .clusterRoles()
        .resource(
            new ClusterRoleBuilder()
                .withNewMetadata()
                .withName(ROLE)
                .endMetadata()
                .withRules(
                    new PolicyRuleBuilder()
                        .withApiGroups("soko.dev")
                        .withResources("storagenodes")
                        .withVerbs("get", "create", "patch")
                        .build(),
                    new PolicyRuleBuilder()
                        .withApiGroups("")
                        .withResources("events")
                        .withVerbs("create", "patch")
                        .build(),
                    new PolicyRuleBuilder()
                        .withApiGroups("")
                        .withResources("nodes")
                        .withVerbs("get", "watch")
                        .build())
                .build())
        .serverSideApply();
    admin
        .rbac()
        .clusterRoleBindings()
        .resource(
            new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(ROLE)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", ROLE)
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(SERVICE_ACCOUNT)
                .withNamespace(NAMESPACE)
                .endSubject()
                .build())
        .serverSideApply();
  }

  @Override
  public void close() {
    admin.close();
    server.stop();
  }
}

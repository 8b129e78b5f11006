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
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.api.model.rbac.SubjectBuilder;
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
  public static final String CONTROLLER_ACCOUNT = "controller";
  private static final String CRD = "../crd/src/generated/crds/storagenodes.soko.dev-v1.yml";
  private static final String NODE_REQUEST_CRD =
      "../crd/src/generated/crds/noderequests.soko.dev-v1.yml";
  private static final String ROLE = "soko-node:pool-report";
  private static final String SNAPSHOTTER_ROLE = "soko-node:snapshotter";
  private static final String PV_READER_ROLE = "soko-node:provisioner";
  private static final String GROUP_SNAPSHOTTER_ROLE = "soko-controller:group-snapshotter";

  private final KubeAPIServer server;
  private final Config adminConfig;
  private final KubernetesClient admin;

  private NodePluginApiServer(KubeAPIServer server) {
    this.server = server;
    this.adminConfig = Config.fromKubeconfig(server.getKubeConfigYaml());
    this.admin = new KubernetesClientBuilder().withConfig(adminConfig).build();
  }

  private static Path cache() {
    return Path.of(
        System.getenv()
            .getOrDefault("SOKO_CACHE", System.getProperty("user.home") + "/.cache/soko"));
  }

  /** Starts the server and lays out the CRD, namespace, ServiceAccount and its RBAC. */
  public static NodePluginApiServer start() throws Exception {
    Path testDir = cache().resolve("kube-api-test");
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
    return podEnvironment(SERVICE_ACCOUNT, dir);
  }

  /** As {@link #nodePlugin}, for the controller's ServiceAccount ({@link #serveNodeRequests}). */
  public Map<String, String> controller(Path dir) throws Exception {
    return podEnvironment(CONTROLLER_ACCOUNT, dir);
  }

  private Map<String, String> podEnvironment(String account, Path dir) throws Exception {
    String token =
        admin
            .serviceAccounts()
            .inNamespace(NAMESPACE)
            .withName(account)
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

  /**
   * Grants the node plugin's account the PersistentVolume reads of its provisioner ClusterRole
   * (operator model/Rbac renders get, list, watch among them): a clone of a volume another node
   * holds finds that node in the source's PersistentVolume under the same account.
   */
  public void servePersistentVolumeReads() {
    clusterRole(
        PV_READER_ROLE, SERVICE_ACCOUNT, rule("", "persistentvolumes", "get", "list", "watch"));
  }

  /**
   * Serves the VolumeSnapshot API (the CRDs of the pinned external-snapshotter, from {@code
   * hack/tools.sh snapshot-crds}) and grants the node plugin's account the rules of its snapshotter
   * ClusterRole, rule for rule as the operator renders them with snapshots on (operator
   * model/Rbac): the driver labels imported snapshot contents under the same account.
   */
  public void serveSnapshots() throws Exception {
    applyCrds(
        "snapshot.storage.k8s.io",
        List.of("volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots"));
    clusterRole(
        SNAPSHOTTER_ROLE,
        SERVICE_ACCOUNT,
        rule("", "events", "list", "watch", "create", "update", "patch"),
        rule("snapshot.storage.k8s.io", "volumesnapshotclasses", "get", "list", "watch"),
        rule(
            "snapshot.storage.k8s.io",
            "volumesnapshotcontents",
            "get",
            "list",
            "watch",
            "update",
            "patch"),
        rule("snapshot.storage.k8s.io", "volumesnapshotcontents/status", "update", "patch"));
  }

  /**
   * Serves the VolumeGroupSnapshot API (the group CRDs that {@code hack/tools.sh snapshot-crds}
   * keeps with the others) and grants the controller's account the group snapshotter's rules on
   * group contents, as the operator renders them with group snapshots on: the controller-mode
   * driver labels group snapshot contents under them.
   */
  public void serveGroupSnapshots() throws Exception {
    applyCrds(
        "groupsnapshot.storage.k8s.io",
        List.of(
            "volumegroupsnapshotclasses", "volumegroupsnapshotcontents", "volumegroupsnapshots"));
    serviceAccount(CONTROLLER_ACCOUNT);
    clusterRole(
        GROUP_SNAPSHOTTER_ROLE,
        CONTROLLER_ACCOUNT,
        rule(
            "groupsnapshot.storage.k8s.io",
            "volumegroupsnapshotclasses",
            "get",
            "list",
            "watch",
            "patch"),
        rule(
            "groupsnapshot.storage.k8s.io",
            "volumegroupsnapshotcontents",
            "get",
            "list",
            "watch",
            "update",
            "patch"),
        rule(
            "groupsnapshot.storage.k8s.io",
            "volumegroupsnapshotcontents/status",
            "update",
            "patch"));
  }

  /** Applies the cached external-snapshotter CRDs of {@code plurals} in {@code group}. */
  private void applyCrds(String group, List<String> plurals) throws Exception {
    Path crds = cache().resolve("crds").resolve("snapshot");
    assertThat(crds.resolve(group + "_" + plurals.get(0) + ".yaml"))
        .as("run `hack/tools.sh snapshot-crds` first")
        .isRegularFile();
    for (String plural : plurals) {
      try (InputStream in = Files.newInputStream(crds.resolve(group + "_" + plural + ".yaml"))) {
        for (HasMetadata o : admin.load(in).items()) {
          admin.resource(o).serverSideApply();
        }
      }
      established(plural + "." + group);
    }
  }

  /** A ClusterRole of {@code rules}, bound to {@code account}. */
  private void clusterRole(
      String name, String account, io.fabric8.kubernetes.api.model.rbac.PolicyRule... rules) {
    admin
        .rbac()
        .clusterRoles()
        .resource(
            new ClusterRoleBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withRules(rules)
                .build())
        .serverSideApply();
    bind(name, account);
  }

  /**
   * Serves the NodeRequest API (the crd module's CRD) and grants both sides the rules the operator
   * renders for the controller → node path (operator model/Rbac): the node plugin reads and watches
   * the requests in its namespace and writes their status only; the controller writes requests,
   * reads PersistentVolumes, to find a volume's node, and gets Nodes, to tell a node that is gone.
   */
  public void serveNodeRequests() throws Exception {
    try (InputStream in = Files.newInputStream(Path.of(NODE_REQUEST_CRD))) {
      for (HasMetadata o : admin.load(in).items()) {
        admin.resource(o).serverSideApply();
      }
    }
    established("noderequests.soko.dev");
    serviceAccount(CONTROLLER_ACCOUNT);
    namespaceRole(
        SERVICE_ACCOUNT,
        "soko-node:node-requests",
        rule("soko.dev", "noderequests", "get", "list", "watch"),
        rule("soko.dev", "noderequests/status", "patch"));
    namespaceRole(
        CONTROLLER_ACCOUNT,
        "soko-controller:node-requests",
        rule("soko.dev", "noderequests", "get", "list", "create", "patch", "delete"));
    clusterRole(
        "soko-controller:volume-owners",
        CONTROLLER_ACCOUNT,
        rule("", "persistentvolumes", "get", "list", "watch"));
    clusterRole("soko-controller:nodes", CONTROLLER_ACCOUNT, rule("", "nodes", "get"));
  }

  private static io.fabric8.kubernetes.api.model.rbac.PolicyRule rule(
      String group, String resource, String... verbs) {
    return new PolicyRuleBuilder()
        .withApiGroups(group)
        .withResources(resource)
        .withVerbs(verbs)
        .build();
  }

  private void namespaceRole(
      String account, String name, io.fabric8.kubernetes.api.model.rbac.PolicyRule... rules) {
    admin
        .rbac()
        .roles()
        .inNamespace(NAMESPACE)
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withRules(rules)
                .build())
        .serverSideApply();
    admin
        .rbac()
        .roleBindings()
        .inNamespace(NAMESPACE)
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "Role", name)
                .withSubjects(subject(account))
                .build())
        .serverSideApply();
  }

  private static Subject subject(String account) {
    return new SubjectBuilder()
        .withKind("ServiceAccount")
        .withName(account)
        .withNamespace(NAMESPACE)
        .build();
  }

  private void serviceAccount(String name) {
    admin
        .serviceAccounts()
        .inNamespace(NAMESPACE)
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName(name).endMetadata().build())
        .serverSideApply();
  }

  private void established(String crd) {
    admin
        .apiextensions()
        .v1()
        .customResourceDefinitions()
        .withName(crd)
        .waitUntilCondition(
            c ->
                c != null
                    && c.getStatus() != null
                    // A CRD just created has a status without conditions for a moment.
                    && c.getStatus().getConditions() != null
                    && c.getStatus().getConditions().stream()
                        .anyMatch(x -> "Established".equals(x.getType())),
            30,
            TimeUnit.SECONDS);
  }

  private void bind(String role, String account) {
    admin
        .rbac()
        .clusterRoleBindings()
        .resource(
            new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(role)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", role)
                .withSubjects(subject(account))
                .build())
        .serverSideApply();
  }

  private void layOut() throws Exception {
    try (InputStream in = Files.newInputStream(Path.of(CRD))) {
      for (HasMetadata o : admin.load(in).items()) {
        admin.resource(o).serverSideApply();
      }
    }
    established("storagenodes.soko.dev");
    admin
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .serverSideApply();
    serviceAccount(SERVICE_ACCOUNT);
    clusterRole(
        ROLE,
        SERVICE_ACCOUNT,
        rule("soko.dev", "storagenodes", "get", "create", "patch"),
        rule("", "events", "create", "patch"),
        rule("", "nodes", "get", "watch"));
  }

  @Override
  public void close() {
    admin.close();
    server.stop();
  }
}

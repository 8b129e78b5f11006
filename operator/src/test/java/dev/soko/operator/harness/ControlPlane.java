package dev.soko.operator.harness;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * etcd + kube-apiserver (+ optionally kube-controller-manager) as child processes on loopback,
 * built by hack/tools.sh into $SOKO_CACHE/bin. Unlike kube-api-test it can stop and restart the API
 * server on the same port with the same data, and it writes an audit log of the operator's
 * requests. Users authenticate with static tokens: an admin, the operator (as its ServiceAccount's
 * user and groups, so its RBAC applies) and the controller manager.
 */
public final class ControlPlane implements AutoCloseable {
  public static final String OPERATOR_USER = OperatorInstall.OPERATOR_USER;
  private static final String OPERATOR_GROUPS = String.join(",", OperatorInstall.OPERATOR_GROUPS);

  private final Path dir;
  private final Path bin;
  private final int etcdPort = freePort();
  private final int peerPort = freePort();
  private final int apiPort = freePort();
  private final String adminToken = UUID.randomUUID().toString();
  private final String operatorToken = UUID.randomUUID().toString();
  private final String controllerToken = UUID.randomUUID().toString();
  private final List<String> extraApiFlags;
  private Process etcd;
  private Process apiServer;
  private Process controllerManager;
  private Process snapshotController;
  private KubernetesClient admin;

  /**
   * @param dir a fresh work directory (data, logs, audit log, kubeconfigs)
   * @param extraApiFlags more kube-apiserver flags, e.g. a smaller watch cache
   */
  public ControlPlane(Path dir, List<String> extraApiFlags) {
    this.dir = dir;
    this.extraApiFlags = List.copyOf(extraApiFlags);
    this.bin = OperatorInstall.toolCache().resolve("bin");
  }

  /** Starts etcd and kube-apiserver and waits until the API server is ready. */
  public ControlPlane start() throws Exception {
    requireTools("etcd", "kube-apiserver");
    // No server outlives the JVM, even one ended by a signal (try-with-resources then never runs).
    Runtime.getRuntime().addShutdownHook(new Thread(this::destroyChildren, "control-plane-stop"));
    Files.createDirectories(dir.resolve("logs"));
    Files.createDirectories(dir.resolve("pki"));
    writeKeys();
    Files.writeString(
        dir.resolve("tokens.csv"),
        adminToken
            + ",soko-admin,admin,\"system:masters\"\n"
            + operatorToken
            + ","
            + OPERATOR_USER
            + ",operator,\""
            + OPERATOR_GROUPS
            + "\"\n"
            + controllerToken
            + ",system:kube-controller-manager,kcm,\"system:masters\"\n");
    Files.writeString(
        dir.resolve("audit-policy.yaml"),
        """
        apiVersion: audit.k8s.io/v1
        kind: Policy
        omitStages: [RequestReceived]
        rules:
        - level: Metadata
          users: ["%s"]
        - level: None
        """
            .formatted(OPERATOR_USER));
    etcd =
        spawn(
            "etcd",
            List.of(
                bin.resolve("etcd").toString(),
                "--name",
                "soko",
                "--data-dir",
                dir.resolve("etcd").toString(),
                "--listen-client-urls",
                "http://127.0.0.1:" + etcdPort,
                "--advertise-client-urls",
                "http://127.0.0.1:" + etcdPort,
                "--listen-peer-urls",
                "http://127.0.0.1:" + peerPort,
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:" + peerPort,
                "--initial-cluster",
                "soko=http://127.0.0.1:" + peerPort,
                "--unsafe-no-fsync",
                "--log-level",
                "warn"));
    startApiServer();
    writeKubeconfig("admin", adminToken);
    writeKubeconfig("operator", operatorToken);
    writeKubeconfig("controller-manager", controllerToken);
    admin = client(adminToken);
    return this;
  }

  /** Starts kube-controller-manager with only the DaemonSet controller, allowed a high QPS. */
  public void startDaemonSetController() throws IOException {
    startControllerManager(
        List.of("daemonset-controller"),
        List.of(
            "--concurrent-daemonset-syncs",
            "2",
            "--kube-api-qps",
            "400",
            "--kube-api-burst",
            "800"));
  }

  /**
   * Starts kube-controller-manager with just the controllers a storage flow needs without a
   * kubelet: PV binding, PV and PVC protection, namespace deletion and garbage collection.
   */
  public void startStorageControllers() throws IOException {
    startControllerManager(
        List.of(
            "persistentvolume-binder-controller",
            "persistentvolumeclaim-protection-controller",
            "persistentvolume-protection-controller",
            "namespace-controller",
            "garbage-collector-controller"),
        List.of());
  }

  private void startControllerManager(List<String> controllers, List<String> flags)
      throws IOException {
    requireTools("kube-controller-manager");
    List<String> cmd = new ArrayList<>();
    cmd.addAll(
        List.of(
            bin.resolve("kube-controller-manager").toString(),
            "--kubeconfig",
            kubeconfig("controller-manager").toString(),
            "--leader-elect=false",
            "--secure-port",
            "0",
            "--controllers",
            String.join(",", controllers),
            "--v",
            "1"));
    cmd.addAll(flags);
    controllerManager = spawn("kube-controller-manager", cmd);
  }

  /**
   * Applies the VolumeSnapshot CRDs that hack/tools.sh fetched (all of them: snapshot-controller
   * waits for the VolumeGroupSnapshot API before it starts, with a growing back-off; with it served
   * the operator renders the controller's csi-group-snapshotter, which {@link PlayedNode} does not
   * run) and starts snapshot-controller with distributed snapshotting: it labels each
   * VolumeSnapshotContent with its volume's node, so that the csi-snapshotter running with
   * --node-deployment on that node takes it. Clusters that install Soko need their
   * snapshot-controller started with that flag.
   */
  public void startSnapshotController() throws IOException {
    requireTools("snapshot-controller");
    Path crds = bin.resolveSibling("crds").resolve("snapshot");
    List<Path> files;
    try (var list = Files.list(crds)) {
      files = list.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
    }
    if (files.isEmpty()) {
      throw new IllegalStateException(crds + " holds no CRD: run `hack/tools.sh snapshot-crds`");
    }
    for (Path file : files) {
      try (var in = Files.newInputStream(file)) {
        for (var crd : admin.load(in).items()) {
          admin.resource(crd).fieldManager("harness").forceConflicts().serverSideApply();
        }
      }
    }
    for (Path file : files) {
      try (var in = Files.newInputStream(file)) {
        for (var crd : admin.load(in).items()) {
          admin
              .apiextensions()
              .v1()
              .customResourceDefinitions()
              .withName(crd.getMetadata().getName())
              .waitUntilCondition(ControlPlane::established, 60, TimeUnit.SECONDS);
        }
      }
    }
    snapshotController =
        spawn(
            "snapshot-controller",
            List.of(
                bin.resolve("snapshot-controller").toString(),
                "--kubeconfig",
                kubeconfig("admin").toString(),
                "--leader-election=false",
                "--enable-distributed-snapshotting",
                "--v",
                "2"));
  }

  private static boolean established(
      io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition crd) {
    return crd != null
        && crd.getStatus() != null
        && crd.getStatus().getConditions() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** Writes a kubeconfig that authenticates with a bearer token, e.g. a ServiceAccount's. */
  public Path tokenKubeconfig(String name, String token) throws IOException {
    Path file = dir.resolve(name + ".kubeconfig");
    Files.writeString(file, kubeconfigYaml(apiPort, token));
    return file;
  }

  /** Starts the API server (again: same port, flags and data) and waits until it is ready. */
  public void startApiServer() throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.addAll(
        List.of(
            bin.resolve("kube-apiserver").toString(),
            "--etcd-servers",
            "http://127.0.0.1:" + etcdPort,
            "--bind-address",
            "127.0.0.1",
            "--advertise-address",
            "127.0.0.1",
            "--secure-port",
            Integer.toString(apiPort),
            "--cert-dir",
            dir.resolve("pki").toString(),
            "--token-auth-file",
            dir.resolve("tokens.csv").toString(),
            "--authorization-mode",
            "RBAC",
            "--allow-privileged=true",
            "--service-account-issuer",
            "https://kubernetes.default.svc",
            "--service-account-key-file",
            dir.resolve("pki/sa.pub").toString(),
            "--service-account-signing-key-file",
            dir.resolve("pki/sa.key").toString(),
            "--service-cluster-ip-range",
            "10.96.0.0/24",
            "--audit-policy-file",
            dir.resolve("audit-policy.yaml").toString(),
            "--audit-log-path",
            auditLogPath().toString(),
            "--audit-log-format",
            "json",
            "--audit-log-mode",
            "blocking",
            "--v",
            "0"));
    cmd.addAll(extraApiFlags);
    apiServer = spawn("kube-apiserver", cmd);
    KubernetesClient probe = client(adminToken);
    try {
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      while (true) {
        if (!apiServer.isAlive()) {
          throw new IllegalStateException(
              "kube-apiserver exited; see " + dir.resolve("logs/kube-apiserver.log"));
        }
        try {
          String ready = probe.raw("/readyz");
          if (ready != null
              && ready.startsWith("ok")
              && probe.namespaces().withName("default").get() != null) {
            return;
          }
        } catch (RuntimeException e) {
          // not yet
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("kube-apiserver not ready within 120 s");
        }
        Thread.sleep(200);
      }
    } finally {
      probe.close();
    }
  }

  /** Stops the API server (SIGTERM, then SIGKILL after 20 s); etcd and its data stay. */
  public void stopApiServer() throws InterruptedException {
    stop(apiServer);
  }

  public KubernetesClient admin() {
    return admin;
  }

  /** A new admin client; the caller closes it. */
  public KubernetesClient newAdminClient(int maxConcurrentRequests) {
    Config config = config(adminToken);
    config.setMaxConcurrentRequests(maxConcurrentRequests);
    config.setMaxConcurrentRequestsPerHost(maxConcurrentRequests);
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  /** Kubeconfig of "admin", "operator" or "controller-manager". */
  public Path kubeconfig(String user) {
    return dir.resolve(user + ".kubeconfig");
  }

  /** Kubeconfig of the operator's user that talks to the API server through another port. */
  public Path operatorKubeconfigVia(int port) throws IOException {
    Path file = dir.resolve("operator-via-" + port + ".kubeconfig");
    Files.writeString(file, kubeconfigYaml(port, operatorToken));
    return file;
  }

  /**
   * Compacts etcd's history up to its current revision, as the API server does every five minutes:
   * a watch resumed from an older resource version is answered 410 Gone (for a resource without the
   * API server's watch cache). Uses etcd's JSON gateway on loopback.
   */
  public long compactEtcd() throws IOException, InterruptedException {
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    String range =
        post(
            http,
            "/v3/kv/range",
            "{\"key\": \"" + Base64.getEncoder().encodeToString("/".getBytes()) + "\"}");
    var header = new com.fasterxml.jackson.databind.ObjectMapper().readTree(range).path("header");
    long revision = header.path("revision").asLong();
    if (revision <= 0) {
      throw new IllegalStateException("etcd answered no revision: " + range);
    }
    post(http, "/v3/kv/compaction", "{\"revision\": \"" + revision + "\", \"physical\": true}");
    return revision;
  }

  private String post(java.net.http.HttpClient http, String path, String body)
      throws IOException, InterruptedException {
    var response =
        http.send(
            java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + etcdPort + path))
                .timeout(Duration.ofSeconds(10))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IllegalStateException(
          "etcd " + path + ": " + response.statusCode() + " " + response.body());
    }
    return response.body();
  }

  public int apiPort() {
    return apiPort;
  }

  public Path auditLogPath() {
    return dir.resolve("audit.log");
  }

  public AuditLog audit() {
    return new AuditLog(auditLogPath(), OPERATOR_USER);
  }

  public Path dir() {
    return dir;
  }

  /** Applies the CRD and the operator's RBAC file from the classpath, waits for the CRD. */
  public void installCrdAndRbac() throws Exception {
    OperatorInstall.apply(admin, "harness");
  }

  @Override
  public void close() {
    if (admin != null) {
      admin.close();
    }
    try {
      stop(snapshotController);
      stop(controllerManager);
      stop(apiServer);
      stop(etcd);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void destroyChildren() {
    for (Process p : new Process[] {snapshotController, controllerManager, apiServer, etcd}) {
      if (p != null) {
        p.destroyForcibly();
      }
    }
  }

  private void requireTools(String... tools) {
    for (String tool : tools) {
      if (!Files.isExecutable(bin.resolve(tool))) {
        throw new IllegalStateException(
            bin.resolve(tool) + " is missing: run `hack/tools.sh " + tool + "` first");
      }
    }
  }

  private Process spawn(String name, List<String> cmd) throws IOException {
    Path log = dir.resolve("logs").resolve(name + ".log");
    return new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
  }

  private static void stop(Process p) throws InterruptedException {
    if (p == null || !p.isAlive()) {
      return;
    }
    p.destroy();
    if (!p.waitFor(20, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private KubernetesClient client(String token) {
    return new KubernetesClientBuilder().withConfig(config(token)).build();
  }

  private Config config(String token) {
    return Config.fromKubeconfig(kubeconfigYaml(apiPort, token));
  }

  private void writeKubeconfig(String user, String token) throws IOException {
    Files.writeString(kubeconfig(user), kubeconfigYaml(apiPort, token));
  }

  /** Loopback only; the API server's serving certificate is self-signed, so it is not verified. */
  private static String kubeconfigYaml(int port, String token) {
    return """
        apiVersion: v1
        kind: Config
        clusters:
        - name: soko
          cluster:
            server: https://127.0.0.1:%d
            insecure-skip-tls-verify: true
        users:
        - name: soko
          user:
            token: %s
        contexts:
        - name: soko
          context: {cluster: soko, user: soko}
        current-context: soko
        """
        .formatted(port, token);
  }

  private void writeKeys() throws Exception {
    KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
    gen.initialize(2048);
    KeyPair pair = gen.generateKeyPair();
    Files.writeString(
        dir.resolve("pki/sa.key"), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
    Files.writeString(dir.resolve("pki/sa.pub"), pem("PUBLIC KEY", pair.getPublic().getEncoded()));
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}

package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.PoolStatus;
import dev.soko.api.v1alpha1.PoolSummaryStatus;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node drivers' StorageNode reports in the StorageCluster's status, on a real kube-apiserver
 * with the operator under its own RBAC. In the first test the real driver (the packaged jar, node
 * mode) reports, authenticated as the node plugin's ServiceAccount with the RBAC the operator
 * rendered for it; the others write reports as the driver writes them (the JSON its NodeReportTest
 * pins) with its field manager.
 */
class PoolStatusIT {
  static final Path DRIVER_JAR = Path.of("../driver/target/soko-driver.jar");
  static final String NODES_API = "soko.dev/v1alpha1";
  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
  static TestCluster cluster;
  static KubernetesClient admin;

  @TempDir Path dir;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
    admin = cluster.admin;
  }

  @Test
  void theRealDriversRefusedPoolDegradesTheStatusUntilItsDirectoryAppears() throws Exception {
    assertThat(DRIVER_JAR).as("build the driver first (mvn package)").isRegularFile();
    String name = "psdrv";
    String node = name + "-n1";
    create(withExtraPool(Specs.cluster(name)));
    node(node);
    Path main = Files.createDirectories(dir.resolve("main"));
    Path extra = dir.resolve("extra");
    int healthPort = freePort();
    Process driver = startDriver(name, node, main, extra, healthPort);
    try {
      StorageCluster refused =
          awaitStatus(
              name, s -> summary(s, "extra") != null && summary(s, "extra").refused() == 1, driver);
      assertThat(summary(refused, "main"))
          .extracting(PoolSummaryStatus::ready, PoolSummaryStatus::notReporting)
          .containsExactly(1, 0);
      assertThat(summary(refused, "main").sizeBytes()).isPositive();
      assertThat(summary(refused, "main").usedBytes()).isPositive();
      assertThat(summary(refused, "main").volumes()).isZero();
      // Refused pairs first, with the driver's reason; then the Ready pool with its readings.
      PoolStatus first = refused.getStatus().getPools().get(0);
      assertThat(first.node()).isEqualTo(node);
      assertThat(first.pool()).isEqualTo("extra");
      assertThat(first.state()).isEqualTo("Refused");
      assertThat(first.message()).contains(extra.toString());
      PoolStatus second = refused.getStatus().getPools().get(1);
      assertThat(second.pool()).isEqualTo("main");
      assertThat(second.state()).isEqualTo("Ready");
      assertThat(second.total()).isEqualTo("10Gi");
      assertThat(second.provisionedBytes()).isZero();
      Condition degraded = condition(refused, "Degraded");
      assertThat(degraded.getStatus()).isEqualTo("True");
      assertThat(degraded.getReason()).isEqualTo("PoolRefused");
      assertThat(degraded.getMessage())
          .startsWith("1 pool refused on its node: " + node + "/extra (")
          .contains(extra.toString());
      // Not Ready here (no kubelet serves the node plugin), but not for the refused pool.
      assertThat(condition(refused, "Ready").getReason()).isNotEqualTo("PoolRefused");
      assertThat(awaitEvent(name, "PoolRefused").getType()).isEqualTo("Warning");

      Files.createDirectories(extra);
      // The driver re-checks a refused pool when asked (at most every 10 s) and writes its report
      // within 5 s of a change. In a pod the kubelet's liveness probe asks every 10 s; here the
      // test plays the kubelet.
      StorageCluster healed =
          awaitStatus(
              name,
              s -> {
                probe(healthPort);
                return summary(s, "extra") != null
                    && summary(s, "extra").ready() == 1
                    && "False".equals(condition(s, "Degraded").getStatus());
              },
              driver);
      assertThat(condition(healed, "Degraded").getReason()).isEqualTo("AsExpected");
      assertThat(healed.getStatus().getPools()).allMatch(p -> "Ready".equals(p.state()));
    } finally {
      driver.destroy();
      driver.waitFor(10, TimeUnit.SECONDS);
      admin.nodes().withName(node).delete();
      deleteReports(name);
    }
  }

  @Test
  void twoStorageClustersOnOneNodeEachSeeTheirOwnReport() {
    create(Specs.cluster("pstwoa"));
    create(Specs.cluster("pstwob"));
    node("pstwo-n1");
    try {
      report("pstwoa", "pstwo-n1", Instant.now(), readyPool("main", 3));
      report("pstwob", "pstwo-n1", Instant.now(), refusedPool("main", "pool path /x is missing"));

      StorageCluster b =
          awaitStatus("pstwob", s -> "PoolRefused".equals(condition(s, "Degraded").getReason()));
      assertThat(summary(b, "main").refused()).isEqualTo(1);
      StorageCluster a =
          awaitStatus("pstwoa", s -> summary(s, "main") != null && summary(s, "main").ready() == 1);
      assertThat(summary(a, "main").refused()).isZero();
      assertThat(summary(a, "main").volumes()).isEqualTo(3);
      assertThat(condition(a, "Degraded").getStatus()).isEqualTo("False");

      // Uninstalling one StorageCluster deletes its report and leaves the other's.
      admin.resources(StorageCluster.class).withName("pstwob").delete();
      Await.until("pstwob uninstalled", () -> cluster.get("pstwob"), s -> s == null);
      Await.until("pstwob's report deleted", () -> storageNode("pstwob.pstwo-n1"), r -> r == null);
      assertThat(storageNode("pstwoa.pstwo-n1")).isNotNull();
    } finally {
      admin.nodes().withName("pstwo-n1").delete();
      deleteReports("pstwoa");
    }
  }

  @Test
  void aStaleReportCountsAsNotReportingAndTheReportOfADeletedNodeIsDeleted() {
    String name = "psstale";
    create(Specs.cluster(name));
    // With no Node at all the operator deletes no report for its Node (a cache problem is
    // likelier).
    node(name + "-keep");
    node(name + "-fresh");
    node(name + "-stale");
    report(name, name + "-fresh", Instant.now(), readyPool("main", 1));
    report(
        name, name + "-stale", Instant.now().minus(Duration.ofMinutes(10)), readyPool("main", 2));

    StorageCluster stale =
        awaitStatus(
            name, s -> summary(s, "main") != null && summary(s, "main").notReporting() == 1);
    assertThat(summary(stale, "main").ready()).isEqualTo(1);
    assertThat(summary(stale, "main").volumes()).as("only the fresh report counts").isEqualTo(1);

    admin.nodes().withName(name + "-stale").delete();
    Await.until(
        "the deleted node's report deleted",
        () -> storageNode(name + "." + name + "-stale"),
        r -> r == null);
    StorageCluster after = awaitStatus(name, s -> summary(s, "main").notReporting() == 0);
    assertThat(summary(after, "main").ready()).isEqualTo(1);
    admin.nodes().withName(name + "-fresh").delete();
    Await.until(
        "the other node's report deleted",
        () -> storageNode(name + "." + name + "-fresh"),
        r -> r == null);
    admin.nodes().withName(name + "-keep").delete();
  }

  // --- the driver and its reports ---

  /** The driver jar in node mode, reporting as the node plugin's ServiceAccount. */
  private Process startDriver(String cluster, String node, Path main, Path extra, int healthPort)
      throws Exception {
    Path mounts = Files.createDirectories(dir.resolve("mnt"));
    Path token = Files.writeString(dir.resolve("token"), nodePluginToken(cluster));
    Config config = admin.getConfiguration();
    Path ca = dir.resolve("ca.crt");
    if (config.getCaCertData() != null) {
      Files.write(ca, Base64.getDecoder().decode(config.getCaCertData()));
    } else {
      Files.copy(Path.of(config.getCaCertFile()), ca);
    }
    ProcessBuilder pb =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-jar",
                DRIVER_JAR.toString(),
                "--endpoint",
                "unix://" + dir.resolve("csi.sock"),
                "--node-id",
                node,
                "--mode",
                "node",
                "--pool",
                "name=main,path=" + main + ",capacity=10Gi",
                "--pool",
                "name=extra,path=" + extra,
                "--allowed-path-root",
                mounts.toString(),
                "--health-address",
                "127.0.0.1:" + healthPort)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("driver.log").toFile());
    pb.environment().put("SOKO_KUBE_API", config.getMasterUrl());
    pb.environment().put("SOKO_KUBE_TOKEN_FILE", token.toString());
    pb.environment().put("SOKO_KUBE_CA_FILE", ca.toString());
    // As the operator's render sets it on the node plugin (NodeDaemonSet).
    pb.environment().put("SOKO_STORAGE_CLUSTER", cluster);
    return pb.start();
  }

  /** A token of the ServiceAccount the operator made for the node plugin, which its RBAC binds. */
  private static String nodePluginToken(String cluster) {
    String namespace = "soko-" + cluster;
    String account = cluster + "-node";
    Await.until(
        "ServiceAccount " + account,
        () -> admin.serviceAccounts().inNamespace(namespace).withName(account).get(),
        sa -> sa != null);
    return admin
        .serviceAccounts()
        .inNamespace(namespace)
        .withName(account)
        .tokenRequest(
            new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).endSpec().build())
        .getStatus()
        .getToken();
  }

  /** A StorageNode exactly as the driver writes it (NodeReport), applied with its field manager. */
  private static void report(String cluster, String node, Instant at, String... pools) {
    String json =
        "{\"apiVersion\":\"soko.dev/v1alpha1\",\"kind\":\"StorageNode\","
            + "\"metadata\":{\"name\":\""
            + cluster
            + "."
            + node
            + "\",\"labels\":{\"soko.dev/storagecluster\":\""
            + cluster
            + "\",\"soko.dev/node\":\""
            + node
            + "\"}},\"node\":\""
            + node
            + "\",\"observedTime\":\""
            + at.truncatedTo(ChronoUnit.SECONDS)
            + "\",\"driverVersion\":\"0.1.0\",\"pools\":["
            + String.join(",", pools)
            + "],\"more\":0}";
    admin
        .resource(Serialization.unmarshal(json, GenericKubernetesResource.class))
        .fieldManager("soko-driver")
        .forceConflicts()
        .serverSideApply();
  }

  private static String readyPool(String name, int volumes) {
    return "{\"name\":\""
        + name
        + "\",\"state\":\"Ready\",\"sizeBytes\":10737418240,\"usedBytes\":1073741824,"
        + "\"provisionedBytes\":2147483648,\"headroomBytes\":8589934592,\"volumes\":"
        + volumes
        + "}";
  }

  private static String refusedPool(String name, String why) {
    return "{\"name\":\"" + name + "\",\"state\":\"Refused\",\"message\":\"" + why + "\"}";
  }

  /** GET /healthz, as the kubelet's liveness probe does; the answer does not matter here. */
  private static void probe(int port) {
    try {
      HTTP.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
              .timeout(Duration.ofSeconds(3))
              .build(),
          HttpResponse.BodyHandlers.discarding());
    } catch (IOException e) {
      // Not serving yet.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  // --- helpers ---

  private static StorageCluster withExtraPool(StorageCluster sc) {
    PoolSpec extra = new PoolSpec();
    extra.setName("extra");
    extra.setPath("/var/lib/soko/" + sc.getMetadata().getName() + "-extra");
    sc.getSpec().getPools().add(extra);
    return sc;
  }

  private static void create(StorageCluster sc) {
    admin.resource(sc).create();
    String name = sc.getMetadata().getName();
    Await.until(
        name + " applied",
        () -> cluster.get(name),
        s -> s.getStatus() != null && s.getStatus().getAppliedObjects() != null);
  }

  private static void node(String name) {
    admin
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  /**
   * Leaves no report behind: with no Node left the operator deletes none for its Node, and a later
   * test's Node would make it do so during that test.
   */
  private static void deleteReports(String cluster) {
    admin
        .genericKubernetesResources(NODES_API, "StorageNode")
        .withLabel("soko.dev/storagecluster", cluster)
        .delete();
  }

  private static GenericKubernetesResource storageNode(String name) {
    return admin.genericKubernetesResources(NODES_API, "StorageNode").withName(name).get();
  }

  private static StorageCluster awaitStatus(
      String name, java.util.function.Predicate<StorageCluster> done) {
    try {
      return Await.until(name + " status", () -> cluster.get(name), done);
    } catch (AssertionError e) {
      StorageCluster sc = cluster.get(name);
      throw new AssertionError(
          name
              + "'s status did not come: "
              + (sc == null ? "no StorageCluster" : Serialization.asJson(sc.getStatus()))
              + "; reports: "
              + admin
                  .genericKubernetesResources(NODES_API, "StorageNode")
                  .list()
                  .getItems()
                  .stream()
                  .map(Serialization::asJson)
                  .toList(),
          e);
    }
  }

  /** As above, and with the driver's log when it does not come (the driver may have died). */
  private StorageCluster awaitStatus(
      String name, java.util.function.Predicate<StorageCluster> done, Process driver)
      throws Exception {
    try {
      return awaitStatus(name, done);
    } catch (AssertionError e) {
      throw new AssertionError(
          e.getMessage()
              + (driver.isAlive() ? "" : "; the driver exited " + driver.exitValue())
              + "; driver log:\n"
              + Files.readString(dir.resolve("driver.log")),
          e);
    }
  }

  private static PoolSummaryStatus summary(StorageCluster sc, String pool) {
    if (sc.getStatus() == null || sc.getStatus().getPoolSummary() == null) {
      return null;
    }
    return sc.getStatus().getPoolSummary().stream()
        .filter(p -> pool.equals(p.pool()))
        .findFirst()
        .orElse(null);
  }

  private static Condition condition(StorageCluster sc, String type) {
    return sc.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElseThrow();
  }

  private static Event awaitEvent(String name, String reason) {
    return Await.until(
            name + " event " + reason,
            () ->
                admin.v1().events().inNamespace("default").list().getItems().stream()
                    .filter(e -> name.equals(e.getInvolvedObject().getName()))
                    .filter(e -> reason.equals(e.getReason()))
                    .toList(),
            l -> !l.isEmpty())
        .get(0);
  }
}

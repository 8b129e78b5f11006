package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import dev.soko.driver.report.ReportIdentity;
import dev.soko.driver.testing.Await;
import dev.soko.driver.testing.NodePluginApiServer;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pools on chosen nodes, end to end on a real kube-apiserver (kube-api-test, offline, loopback,
 * RBAC on): two Node objects labelled differently, and on each a real driver jar as its node
 * plugin, with two pools whose node selectors pick one node each. The drivers authenticate with a
 * ServiceAccount token holding exactly the node plugin's pool-report rules (operator model/Rbac)
 * and read and watch their own Node. Each serves the pool its node carries, refuses the other, and
 * follows a relabelling without a restart.
 */
class PoolNodeSelectorIT {

  /** The StorageCluster the operator would name in the driver's environment. */
  static final String STORAGE_CLUSTER = "it";

  static final long MIB = 1L << 20;

  /** The watch delivers a relabelling in well under a second; the rest is a loaded machine. */
  static final Duration RELABEL_BOUND = Duration.ofSeconds(15);

  static NodePluginApiServer api;
  static KubernetesClient admin;
  static Path dir;

  final Map<String, DriverJar> drivers = new HashMap<>();

  @BeforeAll
  static void startServer() throws Exception {
    dir = Files.createTempDirectory("soko-selector-");
    api = NodePluginApiServer.start();
    admin = api.admin();
    node("node-a", "nvme");
    node("node-b", "hdd");
  }

  @AfterAll
  static void stopServer() {
    if (api != null) {
      api.close();
    }
  }

  @AfterEach
  void stopDrivers() throws Exception {
    for (DriverJar driver : drivers.values()) {
      driver.close();
    }
  }

  static void node(String name, String disk) {
    admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(Map.of("kubernetes.io/hostname", name, "soko.dev/disk", disk))
                .endMetadata()
                .build())
        .serverSideApply();
  }

  @Test
  void eachNodeServesThePoolItsLabelsSelectRefusesTheOtherAndFollowsARelabelling()
      throws Exception {
    Map<String, String> env = driverEnvironment();
    CsiClient a = start("node-a", env);
    CsiClient b = start("node-b", env);

    assertThat(capacity(a, "fast")).isGreaterThan(100 * MIB);
    assertThat(capacity(a, "slow")).as("not selected: GetCapacity answers 0").isZero();
    assertThat(capacity(b, "slow")).isGreaterThan(100 * MIB);
    assertThat(capacity(b, "fast")).isZero();
    assertNotSelected(a, "slow", "label soko.dev/disk is 'nvme', not 'hdd'");
    assertNotSelected(b, "fast", "label soko.dev/disk is 'hdd', not 'nvme'");
    for (String[] unused :
        List.of(new String[] {"node-a", "slow"}, new String[] {"node-b", "fast"})) {
      try (Stream<Path> files = Files.list(drivers.get(unused[0]).root.resolve(unused[1]))) {
        assertThat(files).as("nothing written into %s on %s", unused[1], unused[0]).isEmpty();
      }
    }
    Await.until(
        "StorageNode node-a: fast Ready, slow NotSelected",
        RELABEL_BOUND,
        () -> states("node-a").equals(List.of("fast=Ready", "slow=NotSelected")));
    Await.until(
        "StorageNode node-b: fast NotSelected, slow Ready",
        RELABEL_BOUND,
        () -> states("node-b").equals(List.of("fast=NotSelected", "slow=Ready")));

    node("node-b", "nvme");
    Await.until(
        "node-b serves fast once relabelled", RELABEL_BOUND, () -> capacity(b, "fast") > 100 * MIB);
    assertThat(capacity(b, "slow")).isZero();
    Await.until(
        "StorageNode node-b follows",
        RELABEL_BOUND,
        () -> states("node-b").equals(List.of("fast=Ready", "slow=NotSelected")));
    assertThat(drivers.get("node-b").log())
        .contains("pool fast at")
        .contains("pool slow not used on this node");
  }

  CsiClient start(String node, Map<String, String> env) throws Exception {
    Path root = Files.createDirectories(dir.resolve(node));
    // The driver never creates a pool's directory; the kubelet's hostPath does, on every node.
    Files.createDirectories(root.resolve("fast"));
    Files.createDirectories(root.resolve("slow"));
    DriverJar driver = new DriverJar(root).asNode(node, env);
    drivers.put(node, driver);
    return driver.startWithPools(
        List.of(
            "name=fast,path="
                + root.resolve("fast")
                + ",capacity=1Gi,nodeSelector:soko.dev/disk=nvme",
            "name=slow,path="
                + root.resolve("slow")
                + ",capacity=1Gi,nodeSelector:soko.dev/disk=hdd"),
        List.of());
  }

  /** What the node plugin's pod has: the ServiceAccount's token and the cluster CA. */
  static Map<String, String> driverEnvironment() throws Exception {
    Map<String, String> env = new HashMap<>(api.nodePlugin(dir));
    env.put(ReportIdentity.ENV, STORAGE_CLUSTER);
    return env;
  }

  static List<String> states(String node) {
    GenericKubernetesResource object =
        admin
            .genericKubernetesResources("soko.dev/v1alpha1", "StorageNode")
            .withName(new ReportIdentity(STORAGE_CLUSTER, node).name())
            .get();
    if (object == null) {
      return List.of();
    }
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> pools =
        (List<Map<String, Object>>) object.getAdditionalProperties().get("pools");
    return pools.stream().map(p -> p.get("name") + "=" + p.get("state")).toList();
  }

  static void assertNotSelected(CsiClient csi, String pool, String reason) {
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                csi.controller()
                    .createVolume(
                        Requests.createVolume("v-" + pool, 16 * MIB, Requests.mount("ext4"))
                            .toBuilder()
                            .putParameters("pool", pool)
                            .build()));
    assertThat(e).as("CreateVolume in pool %s", pool).isNotNull();
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.getStatus().getDescription())
        .contains("pool " + pool + " takes no volumes on this node")
        .contains(reason);
  }

  static long capacity(CsiClient csi, String pool) {
    return csi.controller()
        .getCapacity(Csi.GetCapacityRequest.newBuilder().putParameters("pool", pool).build())
        .getAvailableCapacity();
  }
}

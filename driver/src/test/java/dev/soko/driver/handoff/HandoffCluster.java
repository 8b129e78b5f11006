package dev.soko.driver.handoff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.testing.NodePluginApiServer;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scene of the controller → node integration tests: a real kube-apiserver serving NodeRequests
 * for the class, and per test the node plugin's and the controller's clients, each under its own
 * ServiceAccount, with the controller's PV watch running. What a test starts goes in {@link
 * #running}, closed after it.
 */
abstract class HandoffCluster {
  static final String DRIVER = "csi.soko.dev";

  static NodePluginApiServer server;
  static KubernetesClient admin;

  @TempDir Path dir;
  KubeApi nodeApi;
  KubeApi controllerApi;
  VolumeOwners owners;
  final List<AutoCloseable> running = new ArrayList<>();

  @BeforeAll
  static void startServer() throws Exception {
    server = NodePluginApiServer.start();
    server.serveNodeRequests();
    admin = server.admin();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @BeforeEach
  void clients() throws Exception {
    Files.createDirectories(dir.resolve("node"));
    Files.createDirectories(dir.resolve("controller"));
    nodeApi = KubeApi.fromEnvironment(server.nodePlugin(dir.resolve("node"))).orElseThrow();
    controllerApi =
        KubeApi.fromEnvironment(server.controller(dir.resolve("controller"))).orElseThrow();
    owners =
        new VolumeOwners(controllerApi, DRIVER, "topology.soko.dev/node", Duration.ofSeconds(5));
    running.add(owners);
    owners.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : running) {
      c.close();
    }
  }

  /** A PV of this driver on {@code node}, and its owner once the controller has seen it. */
  VolumeOwners.Owner volumeOn(String node, String id) {
    admin
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pv-" + UUID.randomUUID())
                .endMetadata()
                .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withNewCsi()
                .withDriver(DRIVER)
                .withVolumeHandle(id)
                .endCsi()
                .withNewNodeAffinity()
                .withNewRequired()
                .addNewNodeSelectorTerm()
                .addNewMatchExpression()
                .withKey("topology.soko.dev/node")
                .withOperator("In")
                .withValues(node)
                .endMatchExpression()
                .endNodeSelectorTerm()
                .endRequired()
                .endNodeAffinity()
                .endSpec()
                .build())
        .create();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (owners.of(id).isEmpty()) {
      assertThat(System.nanoTime()).as("the controller sees the PV of " + id).isLessThan(deadline);
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    return owners.of(id).orElseThrow();
  }
}

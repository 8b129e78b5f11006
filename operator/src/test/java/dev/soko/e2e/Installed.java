package dev.soko.e2e;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Objects;

/** The installation's side of a real-node test: the default StorageCluster and what it runs. */
final class Installed {
  private final KubernetesClient client;

  Installed(KubernetesClient client) {
    this.client = client;
  }

  /** {@code spec.nodeLoss: Delete} after {@code deleteAfter}, or the default again with null. */
  void nodeLossDeleteAfter(String deleteAfter) {
    String nodeLoss =
        deleteAfter == null
            ? "null"
            : "{\"policy\": \"Delete\", \"deleteAfter\": \"" + deleteAfter + "\"}";
    client
        .resources(StorageCluster.class)
        .withName(DefaultInstall.RELEASE)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE), "{\"spec\": {\"nodeLoss\": " + nodeLoss + "}}");
  }

  StorageCluster storageCluster() {
    return client.resources(StorageCluster.class).withName(DefaultInstall.RELEASE).get();
  }

  DaemonSet nodePluginDaemonSet() {
    return client.apps().daemonSets().inNamespace(DefaultInstall.SYSTEM).list().getItems().stream()
        .filter(d -> d.getMetadata().getName().endsWith("-node"))
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("no node plugin DaemonSet in " + DefaultInstall.SYSTEM));
  }

  Deployment controllerDeployment() {
    return client.apps().deployments().inNamespace(DefaultInstall.SYSTEM).list().getItems().stream()
        .filter(d -> d.getMetadata().getName().endsWith("-controller"))
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("no controller Deployment in " + DefaultInstall.SYSTEM));
  }

  List<Pod> nodePluginPods() {
    return client
        .pods()
        .inNamespace(DefaultInstall.SYSTEM)
        .withLabels(nodePluginDaemonSet().getSpec().getSelector().getMatchLabels())
        .list()
        .getItems();
  }

  /** The node plugin's pod on {@code node}, not one being deleted. */
  Pod nodePluginPod(String node) {
    return nodePluginPods().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .filter(p -> node.equals(p.getSpec().getNodeName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no node plugin pod on " + node));
  }

  /** The image of each node plugin pod's driver container. */
  List<String> nodePluginImages() {
    return nodePluginPods().stream()
        .flatMap(p -> p.getSpec().getContainers().stream())
        .filter(c -> c.getName().equals("soko-driver"))
        .map(c -> c.getImage())
        .toList();
  }

  /**
   * Whether the node plugin DaemonSet runs the driver of {@code version} on all {@code nodes},
   * every pod of it Ready: the rollout is over.
   */
  boolean rolledOutTo(DaemonSet ds, String version, int nodes) {
    var status = ds.getStatus();
    List<String> images = nodePluginImages();
    return ds.getSpec().getTemplate().getSpec().getContainers().stream()
            .anyMatch(c -> c.getImage().endsWith("/soko-driver:" + version))
        && Objects.equals(status.getObservedGeneration(), ds.getMetadata().getGeneration())
        && Objects.equals(status.getUpdatedNumberScheduled(), nodes)
        && Objects.equals(status.getNumberReady(), nodes)
        && Objects.requireNonNullElse(status.getNumberUnavailable(), 0) == 0
        && images.size() == nodes
        && images.stream().allMatch(i -> i.endsWith(":" + version));
  }

  /** The condition of that type, or null while the status has none. */
  static Condition conditionOf(StorageCluster sc, String type) {
    if (sc == null || sc.getStatus() == null || sc.getStatus().getConditions() == null) {
      return null;
    }
    return sc.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  /** The condition's status ("True", "False", "Unknown"), or null. */
  static String condition(StorageCluster sc, String type) {
    Condition c = conditionOf(sc, type);
    return c == null ? null : c.getStatus();
  }

  static String reason(StorageCluster sc, String type) {
    Condition c = conditionOf(sc, type);
    return c == null ? null : c.getReason();
  }
}

package dev.soko.e2e;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;

/** The installation's side of a real-node test: the default StorageCluster and what it runs. */
final class Installed {
  private final KubernetesClient client;

  Installed(KubernetesClient client) {
    this.client = client;
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

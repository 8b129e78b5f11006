package dev.soko.operator.reconcile.apply;

import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * A StorageClass's provisioner, parameters, reclaimPolicy and volumeBindingMode are immutable (the
 * API server refuses an update of them). When a class of the StorageCluster changes in one of them
 * (encryption added, a pool's fsType or the reclaim policy changed), Soko's class is deleted so
 * that the following apply creates it anew: otherwise every apply would be refused until someone
 * deleted the class by hand. Volumes provisioned through it keep what they were made with; a claim
 * that the external-provisioner picks up in the moment between is provisioned on its next retry.
 * Someone else's class of that name is left alone: the apply reports the API server's refusal. An
 * explicit reconcile step, as {@link CsiDriverReplacer}.
 */
public final class StorageClassReplacer {
  private final KubernetesClient client;

  public StorageClassReplacer(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Deletes each of the StorageCluster's classes whose immutable fields changed; returns a
   * description of each ("name: field old -> new"), empty when none changed.
   *
   * @param cluster the StorageCluster's name, which Soko's label on the class carries
   */
  public List<String> replaceIfImmutableChanged(
      List<StorageClass> desired, String cluster, ClusterCache cache) {
    List<String> replaced = new ArrayList<>();
    for (StorageClass want : desired) {
      String name = want.getMetadata().getName();
      HasMetadata cached = cache.get(KindRegistry.STORAGE_CLASS, null, name).orElse(null);
      if (!(cached instanceof StorageClass have)
          || !GroupSnapshotClassReplacer.ours(have, cluster)) {
        continue;
      }
      String changed = immutableDifferences(want, have);
      if (!changed.isEmpty()) {
        // A StorageClass has no finalizers: the delete is done when the call returns.
        client.storage().v1().storageClasses().withName(name).delete();
        replaced.add(name + ": " + changed);
      }
    }
    return replaced;
  }

  static String immutableDifferences(StorageClass want, StorageClass have) {
    StringBuilder sb = new StringBuilder();
    CsiDriverReplacer.diff(sb, "provisioner", want.getProvisioner(), have.getProvisioner());
    String parameters = changedKeys(want.getParameters(), have.getParameters());
    if (!parameters.isEmpty()) {
      if (sb.length() > 0) {
        sb.append(", ");
      }
      sb.append("parameters ").append(parameters);
    }
    CsiDriverReplacer.diff(sb, "reclaimPolicy", want.getReclaimPolicy(), have.getReclaimPolicy());
    CsiDriverReplacer.diff(
        sb, "volumeBindingMode", want.getVolumeBindingMode(), have.getVolumeBindingMode());
    return sb.toString();
  }

  /** The keys added, removed or changed, by name only ("encryption added, pool changed"). */
  private static String changedKeys(Map<String, String> want, Map<String, String> have) {
    Map<String, String> w = want == null ? Map.of() : want;
    Map<String, String> h = have == null ? Map.of() : have;
    TreeSet<String> keys = new TreeSet<>(w.keySet());
    keys.addAll(h.keySet());
    List<String> changes = new ArrayList<>();
    for (String key : keys) {
      if (!h.containsKey(key)) {
        changes.add(key + " added");
      } else if (!w.containsKey(key)) {
        changes.add(key + " removed");
      } else if (!Objects.equals(w.get(key), h.get(key))) {
        changes.add(key + " changed");
      }
    }
    return String.join(", ", changes);
  }
}

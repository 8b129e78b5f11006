package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Deletes owned objects that are no longer desired (or all of them, on uninstall). */
final class Pruner {
  private static final Logger LOG = LoggerFactory.getLogger(Pruner.class);

  private final KubernetesClient client;

  Pruner(KubernetesClient client) {
    this.client = client;
  }

  /** Deletes this StorageCluster's objects not in {@code desired}; returns how many. */
  int prune(StorageCluster sc, List<HasMetadata> desired, ClusterFacts facts) {
    Set<String> keep = new HashSet<>();
    desired.forEach(o -> keep.add(key(o)));
    int deleted = 0;
    for (HasMetadata actual : OwnedKinds.list(client, sc.getMetadata().getName(), facts)) {
      if (!keep.contains(key(actual))) {
        delete(actual);
        deleted++;
      }
    }
    return deleted;
  }

  /**
   * Deletes everything the StorageCluster created. The namespace goes too unless another
   * StorageCluster still installs into it.
   */
  void deleteAll(StorageCluster sc, ClusterFacts facts, Collection<StorageCluster> all) {
    String name = sc.getMetadata().getName();
    OwnedKinds.list(client, name, facts).forEach(this::delete);
    boolean shared =
        all.stream()
            .anyMatch(
                other ->
                    !other.getMetadata().getName().equals(name)
                        && other.getMetadata().getDeletionTimestamp() == null
                        && Objects.equals(
                            other.getSpec().getNamespace(), sc.getSpec().getNamespace()));
    if (!shared) {
      OwnedKinds.namespaces(client, name).forEach(this::delete);
    }
  }

  private void delete(HasMetadata o) {
    LOG.info(
        "deleting {} {}/{}",
        o.getKind(),
        Objects.toString(o.getMetadata().getNamespace(), ""),
        o.getMetadata().getName());
    client.resource(o).delete();
  }

  private static String key(HasMetadata o) {
    String kind =
        o instanceof GenericKubernetesResource
            ? OwnedKinds.SNAPSHOT_KIND
            : HasMetadata.getKind(o.getClass());
    return kind
        + "/"
        + Objects.toString(o.getMetadata().getNamespace(), "")
        + "/"
        + o.getMetadata().getName()
        + "/"
        + Objects.toString(o.getMetadata().getLabels().get(Names.LABEL_CLUSTER), "");
  }
}

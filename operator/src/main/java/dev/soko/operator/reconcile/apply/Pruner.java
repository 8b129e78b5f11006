package dev.soko.operator.reconcile.apply;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Names;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.Kind;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes owned objects that are no longer desired (or, on uninstall, the workloads and then all),
 * found in the informers' caches by Soko's label, kind by kind in the registry's delete order. An
 * object whose {@link Applier#NAME_ANNOTATION} names another object is a copy someone made of one
 * of ours: it is not Soko's to delete.
 */
public final class Pruner {
  private static final Logger LOG = LoggerFactory.getLogger(Pruner.class);

  private final KubernetesClient client;

  public Pruner(KubernetesClient client) {
    this.client = client;
  }

  /** Deletes this StorageCluster's objects not in {@code desired}; returns how many. */
  public int prune(
      StorageCluster sc, List<HasMetadata> desired, ClusterFacts facts, ClusterCache cache) {
    List<Owned> stale = stale(sc, desired, facts, cache);
    stale.forEach(this::delete);
    return stale.size();
  }

  /** This StorageCluster's objects not in {@code desired}, in delete order. */
  static List<Owned> stale(
      StorageCluster sc, List<HasMetadata> desired, ClusterFacts facts, ClusterCache cache) {
    Set<Key> keep = new HashSet<>();
    desired.forEach(o -> keep.add(Key.of(KindRegistry.of(o), o)));
    return owned(sc.getMetadata().getName(), facts, cache, false).stream()
        .filter(actual -> !keep.contains(Key.of(actual.kind(), actual.object())))
        .toList();
  }

  /**
   * Deletes everything the StorageCluster created. The namespace goes too unless another
   * StorageCluster still installs into it.
   */
  public void deleteAll(
      StorageCluster sc, ClusterFacts facts, Collection<StorageCluster> all, ClusterCache cache) {
    String name = sc.getMetadata().getName();
    boolean shared =
        all.stream()
            .anyMatch(
                other ->
                    !other.getMetadata().getName().equals(name)
                        && other.getMetadata().getDeletionTimestamp() == null
                        && other.getSpec() != null
                        && Objects.equals(
                            other.getSpec().getNamespace(), sc.getSpec().getNamespace()));
    owned(name, facts, cache, !shared).forEach(this::delete);
  }

  /**
   * Deletes the StorageCluster's DaemonSets and Deployments (those not being deleted already): the
   * first step of an uninstall ({@link Uninstaller}). Returns how many.
   */
  public int deleteWorkloads(StorageCluster sc, ClusterFacts facts, ClusterCache cache) {
    List<Owned> workloads =
        owned(sc.getMetadata().getName(), facts, cache, false).stream()
            .filter(o -> KindRegistry.workloads().contains(o.kind()))
            .filter(o -> o.object().getMetadata().getDeletionTimestamp() == null)
            .toList();
    workloads.forEach(this::delete);
    return workloads.size();
  }

  /** A cached object with the registry entry of the informer it came from. */
  record Owned(Kind kind, HasMetadata object) {}

  /**
   * The StorageCluster's objects in delete order; its Namespace only when {@code namespace}, for a
   * namespace is pruned only on uninstall (another StorageCluster may share it).
   */
  private static List<Owned> owned(
      String cluster, ClusterFacts facts, ClusterCache cache, boolean namespace) {
    List<Owned> out = new ArrayList<>();
    for (Kind kind : KindRegistry.deleteOrder()) {
      if (!kind.served(facts) || (kind == KindRegistry.NAMESPACE && !namespace)) {
        continue;
      }
      cache
          .list(kind, o -> cluster.equals(labels(o).get(Names.LABEL_CLUSTER)) && !aCopy(o))
          .forEach(o -> out.add(new Owned(kind, o)));
    }
    return out;
  }

  private void delete(Owned owned) {
    HasMetadata o = owned.object();
    LOG.info(
        "deleting {} {}/{}",
        owned.kind().kind(),
        Objects.toString(o.getMetadata().getNamespace(), ""),
        o.getMetadata().getName());
    if (o instanceof GenericKubernetesResource generic) {
      // Cached items of a generic informer may come without apiVersion and kind.
      generic.setApiVersion(owned.kind().apiVersion());
      generic.setKind(owned.kind().kind());
    }
    client.resource(o).delete();
  }

  /**
   * Named by its annotation as another object. Objects an earlier operator applied have no such
   * annotation; they count as Soko's, and get it at the next apply.
   */
  private static boolean aCopy(HasMetadata o) {
    var annotations = o.getMetadata().getAnnotations();
    String applied = annotations == null ? null : annotations.get(Applier.NAME_ANNOTATION);
    return applied != null && !applied.equals(o.getMetadata().getName());
  }

  private static Map<String, String> labels(HasMetadata o) {
    var labels = o.getMetadata().getLabels();
    return labels == null ? Map.of() : labels;
  }

  /**
   * Identity of an object for pruning: its registry kind (so any number of optional kinds keep
   * apart), namespace, name and owning StorageCluster.
   */
  record Key(String apiVersion, String kind, String namespace, String name, String cluster) {
    static Key of(Kind kind, HasMetadata o) {
      return new Key(
          kind.apiVersion(),
          kind.kind(),
          Objects.toString(o.getMetadata().getNamespace(), ""),
          o.getMetadata().getName(),
          Objects.toString(labels(o).get(Names.LABEL_CLUSTER), ""));
    }
  }
}

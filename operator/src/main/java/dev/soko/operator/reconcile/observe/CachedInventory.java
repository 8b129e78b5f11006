package dev.soko.operator.reconcile.observe;

import dev.soko.operator.nodeloss.Inventory;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Node-loss's view of the registry's Node, PersistentVolume and (unlabelled) VolumeSnapshotContent
 * informers.
 */
public final class CachedInventory implements Inventory {
  private final ClusterCache cache;

  public CachedInventory(ClusterCache cache) {
    this.cache = cache;
  }

  @Override
  public Set<String> nodeNames() {
    return cache.list(KindRegistry.NODE, n -> true).stream()
        .map(n -> n.getMetadata().getName())
        .collect(Collectors.toSet());
  }

  @Override
  public List<PersistentVolume> volumesOf(String driver) {
    return cache.indexed(KindRegistry.PERSISTENT_VOLUME, driver).stream()
        .map(PersistentVolume.class::cast)
        .toList();
  }

  @Override
  public boolean snapshotsServed() {
    return cache.watches(KindRegistry.VOLUME_SNAPSHOT_CONTENT);
  }

  @Override
  public List<GenericKubernetesResource> unlabelledSnapshotContents() {
    return cache.list(KindRegistry.VOLUME_SNAPSHOT_CONTENT, c -> true).stream()
        .filter(GenericKubernetesResource.class::isInstance)
        .map(GenericKubernetesResource.class::cast)
        .toList();
  }
}

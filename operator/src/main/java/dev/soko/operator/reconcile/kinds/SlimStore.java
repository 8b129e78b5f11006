package dev.soko.operator.reconcile.kinds;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * An informer store that keeps a reduced copy of each object: with 1,000 Nodes a full Node (status,
 * images, conditions) costs tens of kilobytes, a name a few bytes. The reconciler's Pod informer
 * uses it too. The informer still compares resource versions, which the copies keep.
 */
public final class SlimStore<T extends HasMetadata> implements ItemStore<T> {
  private final BasicItemStore<T> store = new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
  private final UnaryOperator<T> slim;

  public SlimStore(UnaryOperator<T> slim) {
    this.slim = slim;
  }

  @Override
  public String getKey(T object) {
    return store.getKey(object);
  }

  @Override
  public T put(String key, T object) {
    return store.put(key, slim.apply(object));
  }

  @Override
  public T remove(String key) {
    return store.remove(key);
  }

  @Override
  public Stream<String> keySet() {
    return store.keySet();
  }

  @Override
  public Stream<T> values() {
    return store.values();
  }

  @Override
  public int size() {
    return store.size();
  }

  @Override
  public T get(String key) {
    return store.get(key);
  }
}

package dev.soko.operator.reconcile.observe;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Which API resources the cluster serves, asked once per group-version and then kept until the next
 * resync (the time after which the operator re-reads what no watch reports: a CRD installed, a
 * cluster upgraded). A new question (an API not asked before) asks at once.
 */
final class Discovery {
  private final KubernetesClient client;
  private final long ttlNanos;
  private final LongSupplier nanoTime;
  private final Map<String, Set<String>> resourcesByGroupVersion = new LinkedHashMap<>();
  private long askedAt;

  Discovery(KubernetesClient client, Duration ttl, LongSupplier nanoTime) {
    this.client = client;
    this.ttlNanos = ttl.toNanos();
    this.nanoTime = nanoTime;
  }

  /** The subset of {@code apis} ("group/version/resource") the cluster serves. */
  synchronized Set<String> served(Collection<String> apis) {
    if (nanoTime.getAsLong() - askedAt > ttlNanos) {
      resourcesByGroupVersion.clear();
    }
    Set<String> served = new HashSet<>();
    for (String api : apis) {
      int slash = api.lastIndexOf('/');
      String groupVersion = api.substring(0, slash);
      if (!resourcesByGroupVersion.containsKey(groupVersion)) {
        if (resourcesByGroupVersion.isEmpty()) {
          askedAt = nanoTime.getAsLong();
        }
        resourcesByGroupVersion.put(groupVersion, ask(groupVersion));
      }
      if (resourcesByGroupVersion.get(groupVersion).contains(api.substring(slash + 1))) {
        served.add(api);
      }
    }
    return served;
  }

  private Set<String> ask(String groupVersion) {
    try {
      APIResourceList list = client.getApiResources(groupVersion);
      Set<String> names = new HashSet<>();
      if (list != null) {
        list.getResources().stream().map(APIResource::getName).forEach(names::add);
      }
      return names;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return Set.of();
      }
      throw e;
    }
  }

  /** A value kept for {@code ttl}, then asked for again. */
  static <T> Supplier<T> memoize(Supplier<T> source, Duration ttl, LongSupplier nanoTime) {
    return new Supplier<>() {
      private T value;
      private long at;

      @Override
      public synchronized T get() {
        long now = nanoTime.getAsLong();
        if (value == null || now - at > ttl.toNanos()) {
          value = source.get();
          at = now;
        }
        return value;
      }
    };
  }
}

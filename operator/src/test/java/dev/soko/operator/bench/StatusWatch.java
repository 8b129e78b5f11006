package dev.soko.operator.bench;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * Follows one StorageCluster through a watch (an informer, so it survives reconnects) and tells
 * when its status first satisfied a condition, stamped when the event arrived: polling would add
 * its period to every latency.
 */
final class StatusWatch implements AutoCloseable {
  private final SharedIndexInformer<StorageCluster> informer;
  private StorageCluster latest;
  private long latestNanos;

  StatusWatch(KubernetesClient admin, String name) {
    informer =
        admin
            .resources(StorageCluster.class)
            .withName(name)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(StorageCluster sc) {
                    seen(sc);
                  }

                  @Override
                  public void onUpdate(StorageCluster old, StorageCluster sc) {
                    seen(sc);
                  }

                  @Override
                  public void onDelete(StorageCluster sc, boolean unknown) {}
                });
  }

  private synchronized void seen(StorageCluster sc) {
    latest = sc;
    latestNanos = System.nanoTime();
    notifyAll();
  }

  synchronized StorageCluster latest() {
    return latest;
  }

  /** System.nanoTime() of the first event whose object satisfies the condition. */
  synchronized long await(String what, Predicate<StorageCluster> done, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (latest == null || !done.test(latest)) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new IllegalStateException(
            "timed out after "
                + timeout
                + " waiting for "
                + what
                + "; status: "
                + (latest == null ? null : latest.getStatus()));
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return latestNanos;
  }

  @Override
  public void close() {
    informer.close();
  }
}

package dev.soko.e2e;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One measured round: {@code count} claims of one StorageClass, each with a pod that mounts it,
 * created at once in a fresh namespace; then the pods and claims deleted at once, until every
 * PersistentVolume of the round is gone. Stages are timed by watches ({@link ClaimClock}), never by
 * polling a claim.
 */
final class ProvisionRound {
  /** Enough parallel requests that creating the objects is never what the round waits for. */
  static final int CREATORS = 32;

  private final KubernetesClient client;
  private final Workloads apps;
  private final String storageClass;
  private final String size;
  private final int count;
  private final Duration timeout;

  final ClaimClock clock = new ClaimClock();
  long firstCreate;
  long lastCreate;
  long deleteStarted;
  long lastVolumeGone;

  ProvisionRound(
      KubernetesClient client,
      Workloads apps,
      String storageClass,
      String size,
      int count,
      Duration timeout) {
    this.client = client;
    this.apps = apps;
    this.storageClass = storageClass;
    this.size = size;
    this.count = count;
    this.timeout = timeout;
  }

  int count() {
    return count;
  }

  /** Creates the claims and pods and returns once every pod runs (or the timeout passed). */
  void provision() throws Exception {
    apps.createNamespace();
    try (SharedIndexInformer<PersistentVolumeClaim> claims =
            client
                .persistentVolumeClaims()
                .inNamespace(apps.namespace())
                .inform(handler(clock::saw));
        SharedIndexInformer<Pod> pods =
            client.pods().inNamespace(apps.namespace()).inform(handler(clock::saw))) {
      ExecutorService creators = Executors.newFixedThreadPool(CREATORS);
      try {
        firstCreate = System.nanoTime();
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          String name = "c%03d".formatted(i);
          done.add(creators.submit(() -> create(name)));
        }
        for (Future<?> each : done) {
          each.get();
        }
        lastCreate = System.nanoTime();
      } finally {
        creators.shutdown();
      }
      awaitUntil(() -> clock.running.size() == count);
    }
  }

  private void create(String name) {
    clock.created.put(name, System.nanoTime());
    apps.create(apps.claim(name, storageClass, size, false));
    apps.create(
        apps.pod(name, name, false, false)
            .editSpec()
            .editFirstContainer()
            // One process that never wakes: 300 pods must not load the node they are measured on.
            .withCommand("sleep", "2147483647")
            .endContainer()
            .endSpec());
  }

  /**
   * Deletes every pod and claim of the round at once and returns when the last of the round's
   * PersistentVolumes is gone (or the timeout passed).
   */
  void delete() throws Exception {
    Set<String> volumes = ConcurrentHashMap.newKeySet();
    try (SharedIndexInformer<PersistentVolume> watch =
        client
            .persistentVolumes()
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(PersistentVolume pv) {
                    if (ours(pv)) {
                      volumes.add(pv.getMetadata().getName());
                    }
                  }

                  @Override
                  public void onUpdate(PersistentVolume old, PersistentVolume pv) {}

                  @Override
                  public void onDelete(PersistentVolume pv, boolean unknownFinalState) {
                    volumes.remove(pv.getMetadata().getName());
                    if (volumes.isEmpty()) {
                      lastVolumeGone = System.nanoTime();
                    }
                  }
                })) {
      deleteStarted = System.nanoTime();
      client.pods().inNamespace(apps.namespace()).delete();
      client.persistentVolumeClaims().inNamespace(apps.namespace()).delete();
      awaitUntil(volumes::isEmpty);
      if (lastVolumeGone == 0) {
        lastVolumeGone = System.nanoTime();
      }
    }
    client.namespaces().withName(apps.namespace()).delete();
  }

  private boolean ours(PersistentVolume pv) {
    return pv.getSpec().getClaimRef() != null
        && apps.namespace().equals(pv.getSpec().getClaimRef().getNamespace());
  }

  private void awaitUntil(BooleanSupplier done) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        System.err.printf(
            "round %s: timed out after %s (%d of %d Bound, %d Running)%n",
            apps.namespace(), timeout, clock.bound.size(), count, clock.running.size());
        return;
      }
      Thread.sleep(50);
    }
  }

  private static <T> ResourceEventHandler<T> handler(Consumer<T> saw) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T object) {
        saw.accept(object);
      }

      @Override
      public void onUpdate(T old, T object) {
        saw.accept(object);
      }

      @Override
      public void onDelete(T object, boolean unknownFinalState) {}
    };
  }
}

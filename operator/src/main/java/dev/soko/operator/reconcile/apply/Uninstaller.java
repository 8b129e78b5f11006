package dev.soko.operator.reconcile.apply;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Names;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Uninstalls a StorageCluster in two steps. Deleting a DaemonSet or Deployment does not end its
 * pods at once: they get their grace period, and until it ends their sidecars still act on what the
 * uninstall deletes (the csi-provisioner deletes its CSIStorageCapacity objects when their
 * StorageClass goes) with the RBAC Soko made for them. So the workloads go first, and the rest
 * (RBAC, ServiceAccounts, classes, the CSIDriver, the namespace) only once no pod of the
 * StorageCluster is left, or once {@link #BOUND} has passed since the wait began: a node that is
 * gone never confirms its pods' end. The wait is remembered in memory; an operator that restarts
 * meanwhile waits the bound again at most.
 */
public final class Uninstaller {
  private static final Logger LOG = LoggerFactory.getLogger(Uninstaller.class);

  /** How long the uninstall waits for the workloads' pods before deleting the rest regardless. */
  public static final Duration BOUND = Duration.ofMinutes(2);

  /** The next look while waiting, should no pod event come. */
  static final Duration RECHECK = Duration.ofSeconds(5);

  private static final int LISTED = 10;

  private final Pruner pruner;
  private final Duration bound;
  private final Supplier<Instant> clock;
  private final Map<String, Instant> waitingSince = new ConcurrentHashMap<>();

  public Uninstaller(Pruner pruner, Duration bound, Supplier<Instant> clock) {
    this.pruner = pruner;
    this.bound = bound;
    this.clock = clock;
  }

  /**
   * What an uninstall step left: done, or what it waits for and when to look again.
   *
   * @param waitingFor null when everything is deleted
   */
  public record Step(String waitingFor, Duration recheck) {
    static final Step DONE = new Step(null, null);

    public boolean done() {
      return waitingFor == null;
    }
  }

  /**
   * Deletes the workloads; once their pods are gone (or the bound passed), everything else the
   * StorageCluster created ({@link Pruner#deleteAll}).
   */
  public Step uninstall(
      StorageCluster sc, ClusterFacts facts, Collection<StorageCluster> all, ClusterCache cache) {
    String name = sc.getMetadata().getName();
    pruner.deleteWorkloads(sc, facts, cache);
    List<String> pods = podsOf(name, cache);
    if (!pods.isEmpty()) {
      Instant now = clock.get();
      Instant since = waitingSince.computeIfAbsent(name, n -> now);
      Duration waited = Duration.between(since, now);
      if (waited.compareTo(bound) < 0) {
        String waitingFor = waitingFor(pods);
        if (since.equals(now)) {
          LOG.info("{}: {}", name, waitingFor);
        }
        Duration left = bound.minus(waited);
        return new Step(waitingFor, left.compareTo(RECHECK) < 0 ? left : RECHECK);
      }
      LOG.warn(
          "{}: {} pod(s) still there {} s after the uninstall began ({}); deleting the RBAC and"
              + " the rest regardless",
          name,
          pods.size(),
          waited.toSeconds(),
          String.join(", ", pods.subList(0, Math.min(LISTED, pods.size()))));
    }
    pruner.deleteAll(sc, facts, all, cache);
    waitingSince.remove(name);
    return Step.DONE;
  }

  /** The StorageCluster's pods in the cache, ending or not, as namespace/name. */
  private static List<String> podsOf(String cluster, ClusterCache cache) {
    return cache
        .list(
            KindRegistry.POD,
            p ->
                p.getMetadata().getLabels() != null
                    && cluster.equals(p.getMetadata().getLabels().get(Names.LABEL_CLUSTER)))
        .stream()
        .map(Uninstaller::namespacedName)
        .sorted()
        .toList();
  }

  private static String namespacedName(HasMetadata o) {
    return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
  }

  private static String waitingFor(List<String> pods) {
    return "waiting for "
        + pods.size()
        + " pod(s) of the deleted workloads to end before deleting their RBAC, classes and"
        + " namespace ("
        + String.join(", ", pods.subList(0, Math.min(LISTED, pods.size())))
        + (pods.size() > LISTED ? ", ..." : "")
        + ")";
  }
}

package dev.soko.operator.reconcile.apply;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import dev.soko.operator.reconcile.kinds.StorageNodeChanges;
import dev.soko.operator.reconcile.observe.StorageNodeReports;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes StorageNode reports nobody reads any more: left over ones ({@link
 * StorageNodeReports.Observed#leftOver}) on reconcile, and a StorageCluster's own on uninstall. The
 * node plugin cannot delete them: it has no delete permission, and a node that is gone runs
 * nothing.
 */
public final class ReportCleanup {
  private static final Logger LOG = LoggerFactory.getLogger(ReportCleanup.class);

  private final KubernetesClient client;

  public ReportCleanup(KubernetesClient client) {
    this.client = client;
  }

  /** Deletes the reports; returns how many (an already deleted one counts too). */
  public int delete(List<StorageNode> reports, String why) {
    for (StorageNode report : reports) {
      LOG.info("deleting StorageNode {}: {}", report.getMetadata().getName(), why);
      client.resources(StorageNode.class).withName(report.getMetadata().getName()).delete();
    }
    return reports.size();
  }

  /**
   * The uninstalled StorageCluster's reports, from the cache. A node plugin pod still shutting down
   * may write once more; the next reconcile of any StorageCluster deletes that report as left over.
   */
  public int deleteAll(String cluster, ClusterCache cache) {
    if (!cache.watches(KindRegistry.STORAGE_NODE)) {
      return 0;
    }
    List<StorageNode> own =
        cache
            .list(
                KindRegistry.STORAGE_NODE,
                r -> cluster.equals(StorageNodeChanges.owner((StorageNode) r)))
            .stream()
            .map(StorageNode.class::cast)
            .toList();
    return delete(own, "StorageCluster " + cluster + " is uninstalled");
  }
}

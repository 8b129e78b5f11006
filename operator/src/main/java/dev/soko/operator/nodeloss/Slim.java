package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import java.util.Map;

/**
 * The parts of Nodes and PersistentVolumes that node-loss handling and the uninstall check read;
 * nothing else. The registry's informers cache these copies.
 */
public final class Slim {
  private Slim() {}

  public static Node node(Node node) {
    return new NodeBuilder().withMetadata(identity(node.getMetadata()).build()).build();
  }

  /**
   * CSI PVs keep driver, claim, affinity, reclaim policy, finalizers and the mark; others a name.
   */
  public static PersistentVolume volume(PersistentVolume pv) {
    ObjectMetaBuilder meta = identity(pv.getMetadata());
    PersistentVolumeSpec spec = pv.getSpec();
    if (spec == null || spec.getCsi() == null) {
      return new PersistentVolumeBuilder().withMetadata(meta.build()).build();
    }
    Map<String, String> annotations = pv.getMetadata().getAnnotations();
    String mark = annotations == null ? null : annotations.get(VolumeMarks.MISSING_SINCE);
    if (mark != null) {
      meta.addToAnnotations(VolumeMarks.MISSING_SINCE, mark);
    }
    return new PersistentVolumeBuilder()
        .withMetadata(
            meta.withFinalizers(pv.getMetadata().getFinalizers())
                .withDeletionTimestamp(pv.getMetadata().getDeletionTimestamp())
                .build())
        .withNewSpec()
        .withNewCsi()
        .withDriver(spec.getCsi().getDriver())
        .withVolumeHandle(spec.getCsi().getVolumeHandle())
        .endCsi()
        .withClaimRef(spec.getClaimRef())
        .withNodeAffinity(spec.getNodeAffinity())
        .withPersistentVolumeReclaimPolicy(spec.getPersistentVolumeReclaimPolicy())
        .endSpec()
        .build();
  }

  /** The CSI driver that provisioned the PV; null for a PV of no CSI driver. */
  public static String driver(PersistentVolume pv) {
    return pv.getSpec() == null || pv.getSpec().getCsi() == null
        ? null
        : pv.getSpec().getCsi().getDriver();
  }

  private static ObjectMetaBuilder identity(ObjectMeta m) {
    return new ObjectMetaBuilder()
        .withName(m.getName())
        .withUid(m.getUid())
        .withResourceVersion(m.getResourceVersion());
  }
}

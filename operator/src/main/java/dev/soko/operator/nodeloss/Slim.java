package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import java.util.Map;

/** The parts of Nodes and PersistentVolumes that node-loss handling reads; nothing else. */
final class Slim {
  private Slim() {}

  static Node node(Node node) {
    return new NodeBuilder().withMetadata(identity(node.getMetadata()).build()).build();
  }

  /**
   * CSI PVs keep driver, claim, affinity, reclaim policy, finalizers and the mark; others a name.
   */
  static PersistentVolume volume(PersistentVolume pv) {
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

  private static ObjectMetaBuilder identity(ObjectMeta m) {
    return new ObjectMetaBuilder()
        .withName(m.getName())
        .withUid(m.getUid())
        .withResourceVersion(m.getResourceVersion());
  }
}

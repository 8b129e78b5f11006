package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;

/** PersistentVolumes as the external-provisioner writes them for a node-local driver. */
final class Volumes {
  static final String DRIVER = "csi.soko.dev";

  private Volumes() {}

  static PersistentVolumeBuilder pv(String name, String driver, String node) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .addToFinalizers(VolumeMarks.PROVISIONER_FINALIZER, "kubernetes.io/pv-protection")
        .endMetadata()
        .withNewSpec()
        .withNewCsi()
        .withDriver(driver)
        .withVolumeHandle("vol-" + name)
        .endCsi()
        .withPersistentVolumeReclaimPolicy("Delete")
        .withNewClaimRef()
        .withNamespace("apps")
        .withName("data-" + name)
        .withUid("uid-" + name)
        .endClaimRef()
        .withNewNodeAffinity()
        .withNewRequired()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey(OrphanFinder.TOPOLOGY_KEY)
        .withOperator("In")
        .withValues(node)
        .endMatchExpression()
        .endNodeSelectorTerm()
        .endRequired()
        .endNodeAffinity()
        .endSpec();
  }

  static PersistentVolume soko(String name, String node) {
    return pv(name, DRIVER, node).build();
  }

  static PersistentVolume marked(String name, String node, String since) {
    return pv(name, DRIVER, node)
        .editMetadata()
        .addToAnnotations(VolumeMarks.MISSING_SINCE, since)
        .endMetadata()
        .build();
  }
}

package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** VolumeSnapshotContents as snapshot-controller and a node's csi-snapshotter write them. */
final class Contents {
  private Contents() {}

  /**
   * A dynamic content of {@code volumeHandle}, bound to VolumeSnapshot apps/snap-{name}.
   *
   * @param managedBy the node label, null for none (its Node was gone when it was made)
   * @param snapshotHandle status.snapshotHandle, null while the snapshot is not taken
   */
  static GenericKubernetesResource dynamic(
      String name, String driver, String volumeHandle, String managedBy, String snapshotHandle) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("driver", driver);
    spec.put("deletionPolicy", "Delete");
    spec.put("source", Map.of("volumeHandle", volumeHandle));
    spec.put(
        "volumeSnapshotRef",
        Map.of("namespace", "apps", "name", "snap-" + name, "uid", "uid-snap-" + name));
    GenericKubernetesResourceBuilder b =
        new GenericKubernetesResourceBuilder()
            .withApiVersion("snapshot.storage.k8s.io/v1")
            .withKind("VolumeSnapshotContent")
            .withNewMetadata()
            .withName(name)
            .withUid("uid-" + name)
            .withFinalizers(LostSnapshots.CONTENT_FINALIZER)
            .endMetadata()
            .addToAdditionalProperties("spec", spec);
    if (snapshotHandle != null) {
      b.addToAdditionalProperties(
          "status", Map.of("snapshotHandle", snapshotHandle, "readyToUse", true));
    }
    GenericKubernetesResource c = b.build();
    if (managedBy != null) {
      c.getMetadata().setLabels(Map.of(LostSnapshots.MANAGED_BY, managedBy));
    }
    return c;
  }

  static GenericKubernetesResource retained(GenericKubernetesResource c) {
    spec(c).put("deletionPolicy", "Retain");
    return c;
  }

  /** As snapshot-controller leaves a content when its VolumeSnapshot is deleted. */
  static GenericKubernetesResource snapshotDeleted(GenericKubernetesResource c) {
    c.getMetadata().setDeletionTimestamp("2026-12-01T11:00:00Z");
    c.getMetadata().setAnnotations(Map.of(LostSnapshots.BEING_DELETED, "yes"));
    return c;
  }

  /** Deleted by someone, without its VolumeSnapshot's deletion. */
  static GenericKubernetesResource deletedAlone(GenericKubernetesResource c) {
    c.getMetadata().setDeletionTimestamp("2026-12-01T11:00:00Z");
    return c;
  }

  static GenericKubernetesResource finalizers(GenericKubernetesResource c, String... names) {
    c.getMetadata().setFinalizers(List.of(names));
    return c;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource c) {
    Map<String, Object> spec = new LinkedHashMap<>((Map<String, Object>) c.get("spec"));
    c.getAdditionalProperties().put("spec", spec);
    return spec;
  }
}

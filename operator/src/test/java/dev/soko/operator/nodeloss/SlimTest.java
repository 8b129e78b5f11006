package dev.soko.operator.nodeloss;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The informer stores keep what node-loss reads, and little else. */
class SlimTest {
  @Test
  void aSlimVolumeYieldsTheSameOrphan() {
    PersistentVolume full =
        new PersistentVolumeBuilder(Volumes.marked("pv-a", "gone", "2026-12-01T10:00:00Z"))
            .editMetadata()
            .withResourceVersion("42")
            .addToAnnotations("pv.kubernetes.io/provisioned-by", Volumes.DRIVER)
            .addToLabels("team", "a")
            .endMetadata()
            .editSpec()
            .editCsi()
            .addToVolumeAttributes("storage.kubernetes.io/csiProvisionerIdentity", "x")
            .endCsi()
            .addToMountOptions("noatime")
            .endSpec()
            .build();
    PersistentVolume slim = Slim.volume(full);
    assertThat(OrphanFinder.find(Volumes.DRIVER, Set.of(), List.of(slim)))
        .isEqualTo(OrphanFinder.find(Volumes.DRIVER, Set.of(), List.of(full)));
    assertThat(slim.getMetadata().getResourceVersion()).isEqualTo("42");
    assertThat(slim.getMetadata().getAnnotations()).containsOnlyKeys(VolumeMarks.MISSING_SINCE);
    assertThat(slim.getMetadata().getLabels()).isNullOrEmpty();
    assertThat(slim.getSpec().getCsi().getVolumeAttributes()).isNullOrEmpty();
    assertThat(slim.getSpec().getMountOptions()).isNullOrEmpty();
  }

  @Test
  void aVolumeOfNoCsiDriverKeepsOnlyItsName() {
    PersistentVolume hostPath =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("hp")
            .endMetadata()
            .withNewSpec()
            .withNewHostPath()
            .withPath("/data")
            .endHostPath()
            .endSpec()
            .build();
    assertThat(Slim.volume(hostPath).getSpec()).isNull();
    assertThat(Slim.volume(hostPath).getMetadata().getName()).isEqualTo("hp");
  }

  @Test
  void aSlimNodeIsItsName() {
    Node node =
        new NodeBuilder()
            .withNewMetadata()
            .withName("n1")
            .withResourceVersion("7")
            .addToLabels("kubernetes.io/hostname", "n1")
            .endMetadata()
            .withNewStatus()
            .addNewImage()
            .withNames("registry.example/big:1")
            .endImage()
            .endStatus()
            .build();
    Node slim = Slim.node(node);
    assertThat(slim.getMetadata().getName()).isEqualTo("n1");
    assertThat(slim.getMetadata().getResourceVersion()).isEqualTo("7");
    assertThat(slim.getMetadata().getLabels()).isNullOrEmpty();
    assertThat(slim.getStatus()).isNull();
  }
}

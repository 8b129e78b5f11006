package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The sidecars the operator deploys on current clusters are the ones the end-to-end test runs: the
 * newest row of versions.yaml names the tags that hack/versions.env pins for the Go builds.
 */
class VersionsTableTest {
  private static final Pattern PIN = Pattern.compile("^([A-Z_]+)=(\\S+)$", Pattern.MULTILINE);

  @Test
  void newestRowMatchesTheSidecarsTheEndToEndTestBuilds() throws IOException {
    Map<String, String> pins = new HashMap<>();
    Matcher m = PIN.matcher(Files.readString(Path.of("..", "hack", "versions.env")));
    while (m.find()) {
      pins.put(m.group(1), m.group(2));
    }
    String table =
        new String(
            VersionsTableTest.class.getResourceAsStream("/versions.yaml").readAllBytes(),
            java.nio.charset.StandardCharsets.UTF_8);
    String newestRow = table.substring(table.indexOf("- minMinor:"));
    newestRow = newestRow.substring(0, newestRow.indexOf("- minMinor:", 1));
    assertThat(newestRow)
        .contains("sig-storage/csi-provisioner:" + pins.get("CSI_PROVISIONER_VERSION"))
        .contains("sig-storage/csi-resizer:" + pins.get("CSI_RESIZER_VERSION"))
        .contains("sig-storage/csi-snapshotter:" + pins.get("CSI_SNAPSHOTTER_VERSION"))
        .contains("sig-storage/csi-snapshot-metadata:" + pins.get("SNAPSHOT_METADATA_VERSION"));
  }

  /**
   * The snapshot metadata sidecar needs the add-on SnapshotMetadataService CRD: that API is the
   * sidecar's own, not the row's, so a cluster without it runs the rest of the row and is still
   * Compatible. Only rows of Kubernetes with the SnapshotMetadata API (external-snapshot-metadata
   * v1.0.0: v1beta1) have it.
   */
  @Test
  void theSnapshotMetadataSidecarNeedsItsApiAloneAndIsOnTheNewestRowOnly() {
    VersionsTable table = VersionsTable.load();
    assertThat(table.rows())
        .filteredOn(r -> r.images().containsKey(Component.SNAPSHOT_METADATA.key()))
        .extracting(VersionsTable.Row::minMinor)
        .containsExactly(34);
    VersionsTable.Row newest = table.rowFor(KubernetesVersion.parse("1.34"));
    assertThat(newest.apisOf(Component.SNAPSHOT_METADATA)).containsExactly(SnapshotMetadata.API);
    assertThat(newest.requiredApis()).doesNotContain(SnapshotMetadata.API);
    assertThat(newest.apisOf(Component.RESIZER)).isEmpty();
  }

  @Test
  void apisOfASidecarTheRowHasNoImageForAreRefused() {
    VersionsTable.Row row =
        new VersionsTable.Row(
            34,
            Map.of("csi-resizer", "sig-storage/csi-resizer:v1"),
            null,
            null,
            false,
            Map.of("csi-snapshot-metadata", List.of(SnapshotMetadata.API)));
    assertThatThrownBy(() -> new VersionsTable("soko-driver:v1", List.of(row)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("csi-snapshot-metadata");
  }

  @Test
  void theReleaseIsTheProjectVersionTheBuildFilteredIntoTheDriverImage() throws IOException {
    String pom = Files.readString(Path.of("..", "pom.xml"));
    Matcher version = Pattern.compile("<version>([^<]+)</version>").matcher(pom);
    assertThat(version.find()).isTrue();
    VersionsTable table = VersionsTable.load();
    assertThat(table.release()).isEqualTo(version.group(1));
    assertThat(table.driverImage()).isEqualTo("soko-driver:" + table.release());
  }

  @Test
  void aRowsFeatureGatesBecomeOneSortedFlagOfItsSidecarAndNoneOfTheOthers() {
    VersionsTable.Row row =
        new VersionsTable.Row(
            30,
            Map.of("csi-provisioner", "sig-storage/csi-provisioner:v9", "csi-resizer", "r:v1"),
            null,
            Map.of("csi-provisioner", Map.of("Topology", true, "Alpha", false)),
            false);
    assertThat(row.featureGateArgs(Component.PROVISIONER))
        .containsExactly("--feature-gates=Alpha=false,Topology=true");
    assertThat(row.featureGateArgs(Component.RESIZER)).isEmpty();
    assertThat(row.requiredApis()).isEmpty();
  }

  @Test
  void gatesOnASidecarTheRowHasNoImageForAreRefused() {
    VersionsTable.Row row =
        new VersionsTable.Row(
            30,
            Map.of("csi-resizer", "sig-storage/csi-resizer:v1"),
            List.of(),
            Map.of("csi-provisoner", Map.of("Topology", true)),
            false);
    assertThatThrownBy(() -> new VersionsTable("soko-driver:v1", List.of(row)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("csi-provisoner");
  }

  @Test
  void theShippedOldestRowTurnsTheProvisionersTopologyGateOn() {
    VersionsTable table = VersionsTable.load();
    VersionsTable.Row oldest =
        table.rowFor(KubernetesVersion.parse("1." + table.oldestSupportedMinor()));
    assertThat(oldest.images().get("csi-provisioner")).endsWith(":v4.0.1");
    assertThat(oldest.featureGateArgs(Component.PROVISIONER))
        .containsExactly("--feature-gates=Topology=true");
  }

  @Test
  void theGroupSnapshottersGatesAreTheSnapshottersWithTheGroupGateOn() {
    VersionsTable.Row row =
        new VersionsTable.Row(
            34,
            Map.of("csi-snapshotter", "sig-storage/csi-snapshotter:v9"),
            null,
            Map.of(
                "csi-snapshotter", Map.of("Zeta", true, VersionsTable.GROUP_SNAPSHOT_GATE, false)),
            true);
    assertThat(row.featureGateArgs(Component.SNAPSHOTTER))
        .as("the nodes' snapshotters: the row's gates as they are")
        .containsExactly("--feature-gates=CSIVolumeGroupSnapshot=false,Zeta=true");
    assertThat(row.groupSnapshotterGateArgs())
        .containsExactly("--feature-gates=CSIVolumeGroupSnapshot=true,Zeta=true");
    assertThat(
            new VersionsTable.Row(34, Map.of("csi-snapshotter", "s:v9"), null, null, true)
                .groupSnapshotterGateArgs())
        .containsExactly("--feature-gates=CSIVolumeGroupSnapshot=true");
  }

  @Test
  void aRowThatServesGroupsNeedsASnapshotter() {
    VersionsTable.Row row =
        new VersionsTable.Row(
            34, Map.of("csi-resizer", "sig-storage/csi-resizer:v1"), null, null, true);
    assertThatThrownBy(() -> new VersionsTable("soko-driver:v1", List.of(row)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("without a snapshotter");
  }

  /**
   * Only the newest row's snapshotter (v8.7.0: CSIVolumeGroupSnapshot GA and on by default,
   * pkg/features/features.go; the v1 group API) serves groups; v8.2.1 serves v1beta1 and v7.0.2
   * v1alpha1, which Soko does not deploy. The nodes' snapshotters keep the gate off on that row.
   */
  @Test
  void theShippedTableServesGroupsOnTheNewestRowOnly() {
    VersionsTable table = VersionsTable.load();
    assertThat(table.rows())
        .filteredOn(VersionsTable.Row::groupSnapshots)
        .extracting(VersionsTable.Row::minMinor, r -> r.images().get("csi-snapshotter"))
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(34, "sig-storage/csi-snapshotter:v8.7.0"));
    VersionsTable.Row newest = table.rowFor(KubernetesVersion.parse("1.34"));
    assertThat(newest.featureGateArgs(Component.SNAPSHOTTER))
        .containsExactly("--feature-gates=CSIVolumeGroupSnapshot=false");
    assertThat(newest.groupSnapshotterGateArgs())
        .containsExactly("--feature-gates=CSIVolumeGroupSnapshot=true");
  }
}

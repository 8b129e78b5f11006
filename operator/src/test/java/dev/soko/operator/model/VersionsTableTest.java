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
        .contains("sig-storage/csi-snapshotter:" + pins.get("CSI_SNAPSHOTTER_VERSION"));
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
            Map.of("csi-provisioner", Map.of("Topology", true, "Alpha", false)));
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
            Map.of("csi-provisoner", Map.of("Topology", true)));
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
}

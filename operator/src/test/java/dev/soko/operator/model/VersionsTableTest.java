package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
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
}

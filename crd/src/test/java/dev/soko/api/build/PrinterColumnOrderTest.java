package dev.soko.api.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.api.v1alpha1.StorageNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class PrinterColumnOrderTest {
  private static final String SORTED_BY_PATH =
      """
      spec:
        versions:
        - additionalPrinterColumns:
          - jsonPath: ".metadata.creationTimestamp"
            name: "Age"
            type: "date"
          - jsonPath: ".status.capacity.used"
            name: "Used"
            type: "string"
          - jsonPath: ".status.conditions[?(@.type==\\"Ready\\")].status"
            name: "Ready"
            type: "string"
          name: "v1alpha1"
          served: true
      """;

  @Test
  void putsColumnsInDeclaredOrderAndLeavesTheRestAlone() {
    String ordered = PrinterColumnOrder.reorder(SORTED_BY_PATH, List.of("Ready", "Used", "Age"));

    assertThat(columnNames(ordered)).containsExactly("Ready", "Used", "Age");
    assertThat(ordered)
        .startsWith("spec:\n  versions:\n  - additionalPrinterColumns:\n")
        .contains("    - jsonPath: \".status.conditions[?(@.type==\\\"Ready\\\")].status\"\n")
        .endsWith("    name: \"v1alpha1\"\n    served: true\n");
    assertThat(ordered.lines().sorted().toList())
        .as("only lines moved")
        .isEqualTo(SORTED_BY_PATH.lines().sorted().toList());
  }

  @Test
  void refusesColumnsTheModelDoesNotDeclare() {
    assertThatThrownBy(() -> PrinterColumnOrder.reorder(SORTED_BY_PATH, List.of("Ready", "Age")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[Age, Used, Ready]");
  }

  @Test
  void declaredOrderStartsWithReadyAndEndsWithAge() {
    List<String> order = PrinterColumnOrder.declaredOrder();

    assertThat(order).first().isEqualTo("Ready");
    assertThat(order).last().isEqualTo("Age");
  }

  @Test
  void theBuildOrderedBothGeneratedCopies() throws IOException {
    List<String> order = PrinterColumnOrder.declaredOrder();
    String classpathCopy;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/fabric8/storageclusters.soko.dev-v1.yml")) {
      assertThat(in).as("CRD generated onto the class path").isNotNull();
      classpathCopy = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String committedCopy =
        Files.readString(Path.of("src/generated/crds/storageclusters.soko.dev-v1.yml"));

    assertThat(columnNames(classpathCopy)).isEqualTo(order);
    assertThat(columnNames(committedCopy)).isEqualTo(order);
  }

  private static List<String> columnNames(String yaml) {
    // Column names are the "name:" keys nested one level below the list item's "- jsonPath:".
    Matcher m = Pattern.compile("(?m)^ {4}- jsonPath: .*\\n {6}name: \"([^\"]+)\"").matcher(yaml);
    List<String> names = new ArrayList<>();
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  @Test
  void theStorageNodeCrdIsOrderedByItsOwnModel() throws Exception {
    String committedCopy =
        Files.readString(Path.of("src/generated/crds/storagenodes.soko.dev-v1.yml"));

    assertThat(PrinterColumnOrder.modelOf(committedCopy)).isEqualTo(StorageNode.class);
    assertThat(columnNames(committedCopy))
        .containsExactly("Node", "Ready", "Refused", "Volumes", "Observed", "Age");
  }
}

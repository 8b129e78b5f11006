package dev.soko.api.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ReleaseStampTest {
  private static final String GENERATED =
      """
      apiVersion: "apiextensions.k8s.io/v1"
      kind: "CustomResourceDefinition"
      metadata:
        name: "noderequests.soko.dev"
      spec:
        group: "soko.dev"
      """;

  @Test
  void writesTheReleaseAsTheOnlyAnnotation() {
    assertThat(ReleaseStamp.stamp(GENERATED, "0.3.0"))
        .isEqualTo(
            """
            apiVersion: "apiextensions.k8s.io/v1"
            kind: "CustomResourceDefinition"
            metadata:
              annotations:
                soko.dev/release: "0.3.0"
              name: "noderequests.soko.dev"
            spec:
              group: "soko.dev"
            """);
  }

  @Test
  void replacesAnEarlierStampSoThatABuildWithoutCleanStaysTheSame() {
    String once = ReleaseStamp.stamp(GENERATED, "0.3.0-SNAPSHOT");
    assertThat(ReleaseStamp.stamp(once, "0.3.0-SNAPSHOT")).isEqualTo(once);
    assertThat(ReleaseStamp.stamp(once, "0.3.0")).isEqualTo(ReleaseStamp.stamp(GENERATED, "0.3.0"));
  }

  @Test
  void refusesWhatItWouldWriteWrongly() {
    assertThatThrownBy(() -> ReleaseStamp.stamp(GENERATED, "0.3.0\"\nspec: {}"))
        .hasMessageContaining("not a release version");
    assertThatThrownBy(
            () ->
                ReleaseStamp.stamp(
                    GENERATED.replace("metadata:\n", "metadata:\n  annotations:\n    a: b\n"),
                    "0.3.0"))
        .hasMessageContaining("annotations of its own");
  }

  @Test
  void everyCommittedCrdCarriesARelease() throws IOException {
    try (var files = Files.list(Path.of("src/generated/crds"))) {
      for (Path crd : files.toList()) {
        assertThat(Files.readString(crd))
            .as(crd.toString())
            .containsPattern("\n  annotations:\n    soko.dev/release: \"[0-9]+\\.[0-9]+\\.[0-9]+");
      }
    }
  }
}

package dev.soko.operator.crds;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CrdReleaseTest {
  private static CrdRelease release(String text) {
    return CrdRelease.parse(text).orElseThrow();
  }

  @Test
  void ordersReleasesAsSemanticVersions() {
    List<String> ascending =
        List.of(
            "0.2.0",
            "0.2.1",
            "0.3.0-SNAPSHOT",
            "0.3.0-rc.1",
            "0.3.0-rc.2",
            "0.3.0-rc.10",
            "0.3.0",
            "0.10.0",
            "1.0.0");
    for (int i = 0; i + 1 < ascending.size(); i++) {
      assertThat(release(ascending.get(i)))
          .as(ascending.get(i) + " < " + ascending.get(i + 1))
          .isLessThan(release(ascending.get(i + 1)));
      assertThat(release(ascending.get(i + 1))).isGreaterThan(release(ascending.get(i)));
    }
  }

  @Test
  void numericPreReleaseIdentifiersComeBeforeTextOnes() {
    assertThat(release("1.0.0-1")).isLessThan(release("1.0.0-alpha"));
    assertThat(release("1.0.0-alpha")).isLessThan(release("1.0.0-alpha.1"));
  }

  @Test
  void equalReleasesCompareEqual() {
    assertThat(release("0.3.0-SNAPSHOT")).isEqualByComparingTo(release("0.3.0-SNAPSHOT"));
    assertThat(release("0.3.0")).hasToString("0.3.0");
    assertThat(release("0.3.0-SNAPSHOT")).hasToString("0.3.0-SNAPSHOT");
  }

  @Test
  void whatIsNotAVersionIsNotParsed() {
    for (String text : new String[] {null, "", "v0.3.0", "0.3", "latest", "0.3.0 ", "1.2.3-"}) {
      assertThat(CrdRelease.parse(text)).as(String.valueOf(text)).isEmpty();
    }
  }
}

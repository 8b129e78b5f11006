package dev.soko.driver.iolimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class IoLimitsTest {
  @Test
  void parsesOperationsAndBytesWithTheirSuffixes() {
    IoLimits limits =
        IoLimits.parse(
            Map.of(
                "readIOPS", "2000",
                "writeIOPS", "1",
                "readBytesPerSecond", "100Mi",
                "writeBytesPerSecond", "50M"));

    assertThat(limits).isEqualTo(new IoLimits(2000, 1, 100L << 20, 50_000_000L));
    assertThat(limits.parameters())
        .containsExactly(
            Map.entry("readIOPS", "2000"),
            Map.entry("writeIOPS", "1"),
            Map.entry("readBytesPerSecond", "104857600"),
            Map.entry("writeBytesPerSecond", "50000000"));
    assertThat(IoLimits.parse(limits.parameters())).isEqualTo(limits);
  }

  @Test
  void maxLiftsALimitSoThatAClassCanSetNone() {
    IoLimits limits =
        IoLimits.parse(Map.of("readIOPS", "max", "writeIOPS", "max", "writeBytesPerSecond", "max"));
    assertThat(limits.none()).isTrue();
    assertThat(limits.parameters()).isEmpty();
    assertThat(IoLimits.parse(Map.of("readIOPS", "max", "writeIOPS", "300")))
        .isEqualTo(new IoLimits(0, 300, 0, 0));
  }

  @Test
  void noParametersAreNoLimits() {
    assertThat(IoLimits.parse(Map.of()).none()).isTrue();
    assertThat(IoLimits.NONE.parameters()).isEmpty();
  }

  @Test
  void refusesWhatItDoesNotKnowWithASentenceThatNamesIt() {
    assertThatThrownBy(() -> IoLimits.parse(Map.of("iops", "100")))
        .hasMessage(
            "unknown IO limit parameter \"iops\": the known ones are readIOPS, writeIOPS,"
                + " readBytesPerSecond and writeBytesPerSecond");
    for (String bad : new String[] {"0", "-5", "1.5", "fast", "", "1000000000", "100Mi"}) {
      assertThatThrownBy(() -> IoLimits.parse(Map.of("readIOPS", bad)))
          .as(bad)
          .hasMessage(
              "readIOPS must be a whole number of operations from 1 to 100000000 or max, not \""
                  + bad
                  + "\"");
    }
    for (String bad : new String[] {"4095", "1Gb", "1e9", "-1Mi", "99999999999999999Ti"}) {
      assertThatThrownBy(() -> IoLimits.parse(Map.of("writeBytesPerSecond", bad)))
          .as(bad)
          .hasMessageStartingWith(
              "writeBytesPerSecond must be a whole number of bytes of at least 4096");
    }
  }
}

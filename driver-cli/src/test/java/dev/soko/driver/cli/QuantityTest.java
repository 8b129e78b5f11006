package dev.soko.driver.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QuantityTest {
  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "1073741824, 1073741824",
    "10Gi, 10737418240",
    "500M, 500000000",
    "1.5Gi, 1610612736",
    "1k, 1000",
    "1Ki, 1024",
    "2Ti, 2199023255552",
    "1e3, 1000",
    "1E9, 1000000000",
    "0.5, 1",
    "1.0000001Ki, 1025",
    "+3Mi, 3145728",
    "7Ei, 8070450532247928832",
  })
  void parsesExactly(String text, long bytes) {
    assertThat(Quantity.parseBytes(text)).isEqualTo(bytes);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "-1Gi", "10GB", "Gi", "1..2", "8Ei", "1e40", "ten", "1 Gi", "1m"})
  void refusesWhatIsNotANonNegativeByteQuantity(String text) {
    assertThatThrownBy(() -> Quantity.parseBytes(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + text + "'");
  }
}

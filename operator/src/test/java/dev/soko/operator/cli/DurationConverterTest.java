package dev.soko.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {
  private final DurationConverter converter = new DurationConverter();

  @Test
  void readsSecondsMinutesAndHours() {
    assertThat(converter.convert("90s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(converter.convert("3m")).isEqualTo(Duration.ofMinutes(3));
    assertThat(converter.convert("1h")).isEqualTo(Duration.ofHours(1));
  }

  @Test
  void refusesZeroAndOtherForms() {
    for (String bad : new String[] {"0s", "3", "-1m", "1d", "PT3M", "3 m"}) {
      assertThatThrownBy(() -> converter.convert(bad))
          .isInstanceOf(TypeConversionException.class)
          .hasMessageContaining("is not a duration");
    }
  }

  @Test
  void runDefaultsToAThreeMinuteResync() {
    RunCommand run = new RunCommand();
    new CommandLine(run).parseArgs();
    assertThat(run.resyncInterval).isEqualTo(Duration.ofMinutes(3));
    new CommandLine(run).parseArgs("--resync-interval=2m");
    assertThat(run.resyncInterval).isEqualTo(Duration.ofMinutes(2));
  }
}

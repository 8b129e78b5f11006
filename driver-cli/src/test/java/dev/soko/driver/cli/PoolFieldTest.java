package dev.soko.driver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig;
import org.junit.jupiter.api.Test;

/** The pool fields' help (--help and docs/driver.md) says what the table of backends says. */
class PoolFieldTest {
  @Test
  void theHelpNamesEachBackendAndWhatItServes() {
    for (PoolConfig.Backend row : PoolConfig.Backend.values()) {
      assertThat(PoolField.BACKEND.value).contains(row.flagName());
      assertThat(PoolField.BACKEND.help).contains(row.flagName());
      for (String fs : row.fsTypes()) {
        assertThat(PoolField.FS.help).contains(fs);
      }
    }
    assertThat(PoolField.FS.help)
        .contains("default " + String.join(":", PoolConfig.Backend.IMAGE_FILE.fsTypes()));
  }
}

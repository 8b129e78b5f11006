package dev.soko.driver.exec;

import java.time.Duration;
import java.util.List;

/**
 * Runs a program with an argument list, never through a shell, so no request string can ever be
 * interpreted as shell syntax. Implementations drain output concurrently and enforce the timeout.
 */
public interface Exec {

  /** The timeout for quick administrative commands (mount, losetup, blkid). */
  Duration SHORT = Duration.ofSeconds(60);

  /** The timeout for commands that scale with data (mkfs, cp, resize). */
  Duration LONG = Duration.ofMinutes(30);

  /**
   * Runs {@code command} and returns its result whatever the exit code.
   *
   * @throws ExecException when the program cannot be started or exceeds the timeout
   */
  ExecResult run(List<String> command, Duration timeout);

  /** Runs {@code command} and fails with an {@link ExecException} unless it exits 0. */
  default ExecResult check(List<String> command, Duration timeout) {
    ExecResult result = run(command, timeout);
    if (!result.ok()) {
      throw new ExecException(result.describe());
    }
    return result;
  }

  default ExecResult check(String... command) {
    return check(List.of(command), SHORT);
  }
}

package dev.soko.driver.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProcessExecTest {
  private final ProcessExec exec = new ProcessExec();

  @Test
  void passesArgumentsVerbatimWithoutAShell() {
    ExecResult result = exec.run(List.of("printf", "%s|", "a b", "$(id)", ";rm"), Exec.SHORT);
    assertThat(result.ok()).isTrue();
    assertThat(result.stdout()).isEqualTo("a b|$(id)|;rm|");
  }

  @Test
  void capturesStderrAndExitCode() {
    ExecResult result = exec.run(List.of("ls", "/definitely/not/here"), Exec.SHORT);
    assertThat(result.exitCode()).isNotZero();
    assertThat(result.stderr()).contains("/definitely/not/here");
    assertThat(result.describe()).startsWith("ls /definitely/not/here exited ");
  }

  @Test
  void checkTurnsFailureIntoInternalError() {
    assertThatThrownBy(() -> exec.check("false")).isInstanceOf(ExecException.class);
  }

  @Test
  void drainsLargeOutputWithoutDeadlockAndCapsIt() {
    ExecResult result =
        exec.run(List.of("head", "-c", "3000000", "/dev/zero"), Duration.ofSeconds(20));
    assertThat(result.ok()).isTrue();
    assertThat(result.stdout()).hasSize(ProcessExec.MAX_CAPTURE);
  }

  @Test
  void killsAProcessThatExceedsItsTimeout() {
    long start = System.nanoTime();
    assertThatThrownBy(() -> exec.run(List.of("sleep", "30"), Duration.ofMillis(300)))
        .isInstanceOf(ExecException.class)
        .hasMessageContaining("did not finish");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void missingProgramIsAnInternalErrorNotACrash() {
    assertThatThrownBy(() -> exec.run(List.of("/no/such/program"), Exec.SHORT))
        .isInstanceOf(ExecException.class)
        .hasMessageContaining("cannot start");
  }

  @Test
  void messagesAreUntranslated() {
    assertThat(exec.run(List.of("printenv", "LC_ALL"), Exec.SHORT).stdout()).isEqualTo("C\n");
  }
}

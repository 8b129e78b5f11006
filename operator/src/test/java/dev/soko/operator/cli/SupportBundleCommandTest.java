package dev.soko.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SupportBundleCommandTest {
  @Test
  void defaultsToADayOfLogsATwentySecondExecTimeoutAndATimestampedFile() {
    SupportBundleCommand cmd = new SupportBundleCommand();
    new CommandLine(cmd).parseArgs();
    assertThat(cmd.since).isEqualTo(Duration.ofHours(24));
    assertThat(cmd.execTimeout).isEqualTo(Duration.ofSeconds(20));
    assertThat(cmd.output).isNull();
    assertThat(
            SupportBundleCommand.defaultOutput(
                Clock.fixed(Instant.parse("2026-01-02T03:04:05Z"), ZoneOffset.UTC)))
        .isEqualTo(Path.of("soko-support-20260102T030405Z.tar.gz"));
  }

  @Test
  void isASubcommandOfMainWithItsOptions() {
    CommandLine main = new CommandLine(new Main());
    assertThat(main.getSubcommands()).containsKey("support-bundle");
    CommandLine.ParseResult parsed =
        main.parseArgs(
            "support-bundle",
            "--kubeconfig=/tmp/kc",
            "--output=out.tar.gz",
            "--since=90m",
            "--exec-timeout=5s");
    SupportBundleCommand cmd = parsed.subcommand().commandSpec().commandLine().getCommand();
    assertThat(cmd.kubeconfig).isEqualTo(Path.of("/tmp/kc"));
    assertThat(cmd.output).isEqualTo(Path.of("out.tar.gz"));
    assertThat(cmd.since).isEqualTo(Duration.ofMinutes(90));
    assertThat(cmd.execTimeout).isEqualTo(Duration.ofSeconds(5));
  }
}

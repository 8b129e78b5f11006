package dev.soko.operator.cli;

import dev.soko.operator.support.SupportBundle;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Writes one archive of what it takes to understand a Soko installation; see SupportBundle. */
@Command(
    name = "support-bundle",
    mixinStandardHelpOptions = true,
    description =
        "Collect Soko's objects, logs and each node plugin's view into one .tar.gz, through the"
            + " Kubernetes API only. Secrets are never read; objects are redacted.")
public final class SupportBundleCommand implements Callable<Integer> {
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  @Option(
      names = "--kubeconfig",
      paramLabel = "FILE",
      description = "kubeconfig file (default: in-cluster or $KUBECONFIG)")
  Path kubeconfig;

  @Option(
      names = "--output",
      paramLabel = "FILE",
      description = "Archive to write (default: soko-support-<UTC timestamp>.tar.gz)")
  Path output;

  @Option(
      names = "--since",
      paramLabel = "DURATION",
      defaultValue = "24h",
      converter = DurationConverter.class,
      description = "Logs of this long back, e.g. 90m, 24h (default: ${DEFAULT-VALUE})")
  Duration since;

  @Option(
      names = "--exec-timeout",
      paramLabel = "DURATION",
      defaultValue = "20s",
      converter = DurationConverter.class,
      description =
          "Longest wait for each command run in a node plugin, so one hung node cannot hold the"
              + " bundle (default: ${DEFAULT-VALUE})")
  Duration execTimeout;

  @Override
  public Integer call() throws Exception {
    Config config =
        kubeconfig != null
            ? Config.fromKubeconfig(Files.readString(kubeconfig))
            : Config.autoConfigure(null);
    // Two retries, not the client's ten: a bundle is taken of a cluster in trouble, and an API
    // server that does not answer should cost seconds, not minutes per request.
    config.setRequestRetryBackoffLimit(2);
    Path out = output != null ? output : defaultOutput(Clock.systemUTC());
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      SupportBundle.Summary summary = SupportBundle.write(client, out, since, execTimeout);
      System.err.println(
          "wrote "
              + out
              + ": "
              + summary.entries().size()
              + " files, "
              + summary.failures().size()
              + " steps failed (see summary.txt)");
    }
    return 0;
  }

  static Path defaultOutput(Clock clock) {
    return Path.of("soko-support-" + STAMP.format(clock.instant()) + ".tar.gz");
  }
}

package dev.soko.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher a user types ({@code operator/bin/soko-operator}) with the packaged jar, on a
 * machine that has no class-data archive yet (a fresh {@code SOKO_CACHE} and {@code HOME}): the run
 * that trains the archive prints what the program prints and nothing else, and leaves a complete
 * archive that the next run maps, just as quietly.
 */
class LauncherIT {
  private static final Path LAUNCHER = Path.of("bin", "soko-operator");
  private static final Path JAR = Path.of("target", "soko-operator.jar");
  private static final Duration TIMEOUT = Duration.ofMinutes(2);

  @TempDir Path home;
  private Path sample;

  /** What one launcher run printed. */
  private record Run(int exit, String out, String err) {}

  @BeforeEach
  void sample() throws IOException {
    assertThat(JAR).as("the packaged jar (mvn package builds it before the ITs)").isRegularFile();
    sample = home.resolve("storagecluster.yaml");
    try (var in = getClass().getResourceAsStream("/storagecluster-sample.yaml")) {
      Files.copy(in, sample);
    }
  }

  private Path cds() {
    return home.resolve("cache").resolve("cds");
  }

  private ProcessBuilder launcher(List<String> args, Map<String, String> extraEnv) {
    List<String> command = new ArrayList<>();
    command.add(LAUNCHER.toString());
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    env.remove("SOKO_CDS_ARCHIVE");
    env.remove("SOKO_JAVA_OPTS");
    env.remove("JAVA_TOOL_OPTIONS");
    env.remove("SOKO_IMAGE_REGISTRY");
    env.put("HOME", home.toString());
    env.put("SOKO_CACHE", home.resolve("cache").toString());
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.putAll(extraEnv);
    return pb;
  }

  private Run run(List<String> args, Path stdin) throws Exception {
    ProcessBuilder pb = launcher(args, Map.of());
    Path out = home.resolve("stdout");
    Path err = home.resolve("stderr");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    pb.redirectInput(
        stdin == null
            ? ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())
            : redirect(stdin));
    Process p = pb.start();
    assertThat(p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("launcher finished").isTrue();
    return new Run(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  private static ProcessBuilder.Redirect redirect(Path stdin) {
    return ProcessBuilder.Redirect.from(stdin.toFile());
  }

  private Run render(String file, Path stdin) throws Exception {
    return run(List.of("render", file, "--kubernetes-version", "1.34"), stdin);
  }

  private List<Path> cdsFiles() throws IOException {
    if (!Files.isDirectory(cds())) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(cds())) {
      return files.toList();
    }
  }

  /**
   * Stderr without the render's own note (the objects it leaves out because the operator's CA
   * issues them at run time): what the JVM or the launcher printed, which must be nothing.
   */
  private static List<String> jvmOutput(String stderr) {
    return stderr.lines().filter(line -> !line.startsWith("note: not printed")).toList();
  }

  /** Every YAML document of the output: each one a Kubernetes object. */
  private static List<JsonNode> objects(String yaml) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (MappingIterator<JsonNode> it =
        new YAMLMapper().readerFor(JsonNode.class).readValues(yaml)) {
      while (it.hasNext()) {
        docs.add(it.next());
      }
    }
    assertThat(docs)
        .allSatisfy(
            d -> {
              assertThat(d.path("apiVersion").asText()).isNotEmpty();
              assertThat(d.path("kind").asText()).isNotEmpty();
              assertThat(d.path("metadata").path("name").asText()).isNotEmpty();
            });
    return docs;
  }

  @Test
  void theFirstRenderOnAMachinePrintsOnlyYamlWhileItWritesTheArchiveAndTheNextMapsItQuietly()
      throws Exception {
    assertThat(cdsFiles()).isEmpty();
    Run first = render(sample.toString(), null);
    assertThat(jvmOutput(first.err())).as("stderr of the run that writes the archive").isEmpty();
    assertThat(first.exit()).isZero();
    assertThat(objects(first.out()))
        .extracting(d -> d.path("kind").asText())
        .contains("CSIDriver", "DaemonSet", "Deployment", "StorageClass");
    // One complete archive under its final name, no temporary file left behind.
    List<Path> archives = cdsFiles();
    assertThat(archives).hasSize(1);
    assertThat(archives.get(0).getFileName().toString()).endsWith(".jsa");
    assertThat(Files.size(archives.get(0))).isPositive();

    Run second = render(sample.toString(), null);
    assertThat(jvmOutput(second.err())).as("stderr of a run that maps the archive").isEmpty();
    assertThat(second.exit()).isZero();
    // The same text: nothing in the render depends on the JVM run (e.g. Map.of's order).
    assertThat(second.out()).isEqualTo(first.out());
    assertThat(cdsFiles()).isEqualTo(archives);
  }

  @Test
  void theRunThatWritesTheArchiveReadsTheStorageClusterFromStdin() throws Exception {
    Run first = render("-", sample);
    assertThat(jvmOutput(first.err())).isEmpty();
    assertThat(first.exit()).isZero();
    assertThat(objects(first.out())).isNotEmpty();
    assertThat(cdsFiles()).hasSize(1);
  }

  @Test
  void theProgramsOwnMessagesAreAllThatReachesStderrAndItsExitCodeIsKept() throws Exception {
    Run bad = run(List.of("render", sample.toString(), "--kubernetes-version", "one"), null);
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.out()).isEmpty();
    assertThat(bad.err().lines().toList()).singleElement().asString().startsWith("error: ");
  }

  @Test
  void anArchiveTheJvmCannotUseIsIgnoredWithoutAWord() throws Exception {
    Path garbage = home.resolve("garbage.jsa");
    Files.write(garbage, new byte[64 * 1024]);
    ProcessBuilder pb =
        launcher(
            List.of("render", sample.toString(), "--kubernetes-version", "1.34"),
            Map.of("SOKO_CDS_ARCHIVE", garbage.toString()));
    Path out = home.resolve("stdout");
    Path err = home.resolve("stderr");
    Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertThat(p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(jvmOutput(Files.readString(err))).isEmpty();
    assertThat(p.exitValue()).isZero();
    assertThat(objects(Files.readString(out))).isNotEmpty();
  }

  /**
   * The image trains its archive this way (images/operator/Containerfile): {@code run} against an
   * unreachable API server, stopped by SIGTERM. The launcher is the JVM's parent while the archive
   * is written, so it passes the signal on, and the JVM writes the archive as it exits.
   */
  @Test
  void sigtermToTheLauncherStopsTheTrainingRunWhichStillWritesTheArchive() throws Exception {
    Path kubeconfig = home.resolve("kubeconfig");
    Files.writeString(
        kubeconfig,
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "current-context: t",
            "clusters: [{name: t, cluster: {server: \"https://127.0.0.1:1\"}}]",
            "contexts: [{name: t, context: {cluster: t, user: t}}]",
            "users: [{name: t, user: {}}]",
            ""));
    ProcessBuilder pb =
        launcher(
            List.of(
                "run",
                "--kubeconfig",
                kubeconfig.toString(),
                "--no-leader-election",
                "--health-address",
                "127.0.0.1:0"),
            Map.of());
    Path log = home.resolve("run.log");
    Process p = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    // Until the JVM has started the operator (it logs), then SIGTERM to the launcher only.
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (Files.size(log) == 0 && p.isAlive() && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(p.isAlive()).as("operator running; log: %s", Files.readString(log)).isTrue();
    List<ProcessHandle> jvm = p.children().toList();
    assertThat(jvm).as("the JVM, a child of the launcher while it writes the archive").hasSize(1);
    p.destroy();
    assertThat(p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("the JVM's exit after SIGTERM").isEqualTo(143);
    assertThat(jvm.get(0).isAlive()).as("the JVM stopped with the launcher").isFalse();
    List<Path> archives = cdsFiles();
    assertThat(archives).singleElement().asString().endsWith(".jsa");
  }
}

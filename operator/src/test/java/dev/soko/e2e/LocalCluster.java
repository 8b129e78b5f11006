package dev.soko.e2e;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The cluster that {@code hack/local-cluster.sh up} started: a real kube-apiserver, scheduler and
 * controller-manager, and on each of its nodes a containerd and a kubelet, on this machine, reached
 * through the variables the script prints. The end-to-end tier never starts or stops the cluster;
 * it only restarts one of its processes through the same script, as an admin would restart a node's
 * service.
 */
final class LocalCluster {
  static final Path REPO = Path.of("..").toAbsolutePath().normalize();

  final Path kubeconfig;
  final Path stateDir;

  /** The first node, where the control plane runs too. */
  final String node;

  /** Every node, the first one first. */
  final List<String> nodes;

  final String imageRegistry;
  final Path helm;
  final String projectVersion;

  private LocalCluster(
      Path kubeconfig,
      Path stateDir,
      List<String> nodes,
      String imageRegistry,
      Path helm,
      String version) {
    this.kubeconfig = kubeconfig;
    this.stateDir = stateDir;
    this.node = nodes.get(0);
    this.nodes = List.copyOf(nodes);
    this.imageRegistry = imageRegistry;
    this.helm = helm;
    this.projectVersion = version;
  }

  /**
   * The release the upgrade tier starts from: its version and its chart, built from its commit by
   * hack/previous-release.sh (whose folder hack/e2e-node.sh passes as SOKO_PREVIOUS_RELEASE), its
   * images imported into the nodes.
   */
  record PreviousRelease(String version, Path chart) {}

  static PreviousRelease previousRelease() throws IOException {
    String dir = System.getenv("SOKO_PREVIOUS_RELEASE");
    if (dir == null) {
      throw new IllegalStateException(
          "SOKO_PREVIOUS_RELEASE is not set: run the tier with hack/e2e-node.sh");
    }
    Path chart = Path.of(dir, "chart");
    String version =
        Files.readAllLines(chart.resolve("Chart.yaml")).stream()
            .filter(l -> l.startsWith("appVersion:"))
            .map(l -> l.substring("appVersion:".length()).trim())
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("no appVersion in " + chart));
    return new PreviousRelease(version, chart);
  }

  /** The running cluster, or a failure that says how to start one. */
  static LocalCluster fromEnvironment() throws IOException {
    String kubeconfig = System.getenv("KUBECONFIG");
    String state = System.getenv("SOKO_CLUSTER_DIR");
    if (kubeconfig == null || state == null) {
      throw new IllegalStateException(
          "no local cluster: run `hack/local-cluster.sh up` and export the variables it prints"
              + " (KUBECONFIG, SOKO_CLUSTER_DIR, SOKO_CLUSTER_NODE, SOKO_CLUSTER_IMAGE_REGISTRY)");
    }
    String cache =
        System.getenv()
            .getOrDefault("SOKO_CACHE", System.getProperty("user.home") + "/.cache/soko");
    return new LocalCluster(
        Path.of(kubeconfig),
        Path.of(state),
        Files.readAllLines(Path.of(state, "nodes.list")),
        System.getenv().getOrDefault("SOKO_CLUSTER_IMAGE_REGISTRY", "soko.local"),
        Path.of(cache, "bin", "helm"),
        Objects.requireNonNull(
            System.getProperty("soko.version"),
            "soko.version (the project version, set by the operator's pom) names the images"));
  }

  KubernetesClient client() throws IOException {
    return new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
        .build();
  }

  /** kubectl of the tools cache (beside helm) against this cluster. */
  String kubectl(String... args) throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(
            List.of(
                helm.resolveSibling("kubectl").toString(), "--kubeconfig", kubeconfig.toString()));
    command.addAll(List.of(args));
    return run(command, 180);
  }

  /** Runs the pinned helm against this cluster; fails with its output when it exits non-zero. */
  String helm(String... args) throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(List.of(helm.toString(), "--kubeconfig", kubeconfig.toString()));
    command.addAll(List.of(args));
    return run(command, 300);
  }

  /** Restarts one of the first node's processes (kubelet, containerd) through the script. */
  void restart(String process) throws IOException, InterruptedException {
    restart(process, node);
  }

  /** Restarts one of a node's processes (kubelet, containerd) through the cluster script. */
  void restart(String process, String onNode) throws IOException, InterruptedException {
    script(180, "restart", process, onNode);
  }

  /** Kills a container on a node with SIGKILL, as the OOM killer or a crash would. */
  void killContainer(String onNode, String containerId) throws IOException, InterruptedException {
    String id = containerId.substring(containerId.indexOf("://") + 3);
    script(60, "ctr", "--node", onNode, "task", "kill", "--signal", "SIGKILL", id);
  }

  /** statfs(2) of a path as a node of this cluster sees it (the node's mount namespace). */
  Statfs statfs(String node, String path) throws IOException, InterruptedException {
    List<String> lines = runScript(30, "statfs", node, path).strip().lines().toList();
    String[] f = lines.get(lines.size() - 1).split(" ");
    return new Statfs(
        Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]));
  }

  /**
   * The node's machine dies: all its processes at once, its mounts and its volumes' loop devices;
   * its disks stay. Not the first node (the control plane's).
   */
  void stopNode(String node) throws IOException, InterruptedException {
    script(60, "stop-node", node);
  }

  /** A stopped node boots again with its disks; its kubelet registers it again. */
  void startNode(String node) throws IOException, InterruptedException {
    script(300, "start-node", node);
  }

  /**
   * Cordons every node but {@code node}, so that what is scheduled next lands there; the cordoned
   * nodes, for {@link #uncordon}.
   */
  List<String> cordonAllBut(String node) throws IOException, InterruptedException {
    List<String> others = nodes.stream().filter(n -> !n.equals(node)).toList();
    for (String other : others) {
      kubectl("cordon", other);
    }
    return others;
  }

  void uncordon(List<String> cordoned) throws IOException, InterruptedException {
    for (String node : cordoned) {
      kubectl("uncordon", node);
    }
  }

  /**
   * Velero with its node-agent and a MinIO store on this cluster ({@code hack/velero.sh up}), or
   * their removal ({@code down}).
   */
  void velero(String verb) throws IOException, InterruptedException {
    run(List.of("bash", REPO.resolve("hack/velero.sh").toString(), verb), 600);
  }

  /** The names in a folder as a node sees it (its mount namespace), none when it is missing. */
  List<String> list(String node, String folder) throws IOException, InterruptedException {
    return runScript(30, "ls", node, folder).lines().filter(l -> !l.isBlank()).toList();
  }

  /** How many times {@code text}'s bytes occur in a file as a node sees it, read as bytes. */
  int occurrences(String node, String file, String text) throws IOException, InterruptedException {
    List<String> lines = runScript(120, "occurrences", node, file, text).strip().lines().toList();
    return Integer.parseInt(lines.get(lines.size() - 1).strip());
  }

  /** A node's mount table, as the node sees it: "TARGET SOURCE" a line. */
  String mounts(String node) throws IOException, InterruptedException {
    return runScript(30, "mounts", node);
  }

  /** A fresh XFS filesystem of {@code size} (e.g. 2G) mounted at a path on a node, as a disk. */
  void mountDisk(String node, String path, String size) throws IOException, InterruptedException {
    mountDisk(node, path, size, "xfs");
  }

  /** A fresh disk of filesystem {@code fs} (xfs, or btrfs with quotas on) mounted on a node. */
  void mountDisk(String node, String path, String size, String fs)
      throws IOException, InterruptedException {
    script(120, "mount-disk", node, path, size, fs);
  }

  void umountDisk(String node, String path) throws IOException, InterruptedException {
    script(60, "umount-disk", node, path);
  }

  /**
   * What statfs(2) says of a filesystem, in fragments of {@code fragmentSize} bytes.
   *
   * @param free fragments free for root (f_bfree)
   * @param available fragments free for anyone (f_bavail)
   */
  record Statfs(long fragmentSize, long blocks, long free, long available) {
    long sizeBytes() {
      return blocks * fragmentSize;
    }

    long usedBytes() {
      return (blocks - free) * fragmentSize;
    }
  }

  /** Gives an image on every node a second name, as pushing it under another tag would. */
  void tagImage(String source, String target) throws IOException, InterruptedException {
    for (String each : nodes) {
      script(60, "ctr", "--node", each, "images", "tag", "--force", source, target);
    }
  }

  /**
   * The network namespace of each node (the script's node_netns): the first node's, then others'.
   */
  List<String> netnses() {
    return nodes.stream().map(n -> n.equals(node) ? "soko-cluster" : "soko-cluster-" + n).toList();
  }

  /** What {@code hack/local-cluster.sh} records of the host's network before it starts. */
  String hostNetwork() throws IOException, InterruptedException {
    return run(List.of("ip", "-br", "link"), 10)
        + run(List.of("ip", "route"), 10)
        + run(List.of("ip", "-6", "route"), 10);
  }

  /** The cluster's logs (control plane, runtime, kubelet), copied into a failure report. */
  Path logs() {
    return stateDir.resolve("logs");
  }

  /** Runs a verb of {@code hack/local-cluster.sh}, the only place that touches the node itself. */
  private static void script(int timeoutSeconds, String... args)
      throws IOException, InterruptedException {
    runScript(timeoutSeconds, args);
  }

  private static String runScript(int timeoutSeconds, String... args)
      throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(List.of("bash", REPO.resolve("hack/local-cluster.sh").toString()));
    command.addAll(List.of(args));
    return run(command, timeoutSeconds);
  }

  /** What the command printed, stdout and stderr together; fails when it exits non-zero. */
  static String run(List<String> command, int timeoutSeconds)
      throws IOException, InterruptedException {
    return run(command, timeoutSeconds, true);
  }

  /**
   * What the command printed on stdout alone (a program's output to parse, whatever notes it writes
   * on stderr); fails, with both, when it exits non-zero.
   */
  static String stdout(List<String> command, int timeoutSeconds)
      throws IOException, InterruptedException {
    return run(command, timeoutSeconds, false);
  }

  private static String run(List<String> command, int timeoutSeconds, boolean withStderr)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile("soko-e2e-cmd", ".log");
    Path errors = Files.createTempFile("soko-e2e-cmd", ".err");
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(output.toFile());
      if (withStderr) {
        builder.redirectErrorStream(true);
      } else {
        builder.redirectError(errors.toFile());
      }
      Process p = builder.start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(
            String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
      }
      String out = Files.readString(output, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new AssertionError(
            String.join(" ", command)
                + " exited "
                + p.exitValue()
                + ":\n"
                + out
                + Files.readString(errors, StandardCharsets.UTF_8));
      }
      return out;
    } finally {
      Files.deleteIfExists(output);
      Files.deleteIfExists(errors);
    }
  }
}

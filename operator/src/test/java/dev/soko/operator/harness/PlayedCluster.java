package dev.soko.operator.harness;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A cluster without a kubelet, as the control-plane end-to-end and its demo use it: etcd,
 * kube-apiserver with RBAC, kube-controller-manager's storage controllers and snapshot-controller
 * ({@link ControlPlane}), a tmpfs for the pool ({@link TmpfsPool}), one node whose driver and CSI
 * sidecars are played by processes ({@link PlayedNode}), and the operator jar running as its
 * ServiceAccount. {@link #close()} stops every part, keeps the logs in the directory given at the
 * start and removes the rest.
 */
public final class PlayedCluster implements AutoCloseable {
  /**
   * The names of what one flow makes, all from one prefix, so that two flows' objects and logs are
   * told apart.
   */
  public record Names(
      String prefix,
      String cluster,
      String namespace,
      String driver,
      String storageClass,
      String snapshotClass,
      String apps,
      String node) {
    public static Names of(String prefix) {
      return new Names(
          prefix,
          prefix,
          "soko-" + prefix,
          prefix + ".csi.soko.dev",
          "soko-" + prefix,
          prefix + "-snapshots",
          prefix + "-app",
          "soko-" + prefix + "-node");
    }
  }

  private final Names names;
  private final Path work;
  private final Path keptLogs;
  private TmpfsPool pool;
  private ControlPlane plane;
  private PlayedNode node;
  private OperatorProcess operator;

  private PlayedCluster(Names names, Path work, Path keptLogs) {
    this.names = names;
    this.work = work;
    this.keptLogs = keptLogs;
  }

  /**
   * Starts every part; when one fails, stops those already started before it throws.
   *
   * @param keptLogs where {@link #close()} copies the logs of every process
   */
  public static PlayedCluster start(Names names, Path keptLogs) throws Exception {
    PlayedCluster cluster =
        new PlayedCluster(names, Files.createTempDirectory("soko-e2e-"), keptLogs);
    try {
      cluster.startParts();
      return cluster;
    } catch (Exception | AssertionError e) {
      cluster.close();
      throw e;
    }
  }

  private void startParts() throws Exception {
    pool = TmpfsPool.mount(work.resolve("pool"), "4g");
    plane = new ControlPlane(work, List.of()).start();
    plane.startStorageControllers();
    plane.installCrdAndRbac();
    plane.startSnapshotController();
    node = new PlayedNode(plane, names.node(), work.resolve("node")).register();
    operator =
        OperatorProcess.start(
                plane.kubeconfig("operator"),
                work.resolve("logs/operator.log"),
                "soko-operator-" + names.prefix(),
                null,
                Duration.ofMinutes(10))
            .awaitReady(Duration.ofSeconds(180));
  }

  public Names names() {
    return names;
  }

  public KubernetesClient admin() {
    return plane.admin();
  }

  public ControlPlane plane() {
    return plane;
  }

  public PlayedNode node() {
    return node;
  }

  public OperatorProcess operator() {
    return operator;
  }

  /** The pool's directory, on a filesystem of its own. */
  public Path poolDir() {
    return pool.dir();
  }

  /**
   * A StorageCluster as its YAML: one pool of 2 GiB on the tmpfs, one ext4 StorageClass, snapshots
   * on.
   */
  public String storageClusterYaml() {
    return """
        apiVersion: soko.dev/v1alpha1
        kind: StorageCluster
        metadata:
          name: %s
        spec:
          namespace: %s
          driver:
            name: %s
          pools:
            - name: main
              path: %s
              capacity: 2Gi
              fsTypes: [ext4]
          storageClasses:
            - name: %s
              pool: main
              fsType: ext4
          snapshots:
            enabled: true
            className: %s
        """
        .formatted(
            names.cluster(),
            names.namespace(),
            names.driver(),
            poolDir(),
            names.storageClass(),
            names.snapshotClass());
  }

  /** The image files below the pool's {@code images} or {@code snapshots} directory. */
  public List<Path> poolImages(String dir) {
    Path path = poolDir().resolve(dir);
    if (!Files.isDirectory(path)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(path)) {
      return files.filter(f -> f.toString().endsWith(".img")).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() throws Exception {
    for (AutoCloseable part : new AutoCloseable[] {node, operator, plane, pool}) {
      if (part != null) {
        part.close();
      }
    }
    copyLogs(work.resolve("logs"));
    copyLogs(work.resolve("node/logs"));
    deleteTree(work);
  }

  private void copyLogs(Path from) throws IOException {
    if (!Files.isDirectory(from)) {
      return;
    }
    Files.createDirectories(keptLogs);
    try (Stream<Path> logs = Files.list(from)) {
      for (Path log : logs.toList()) {
        Files.copy(log, keptLogs.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}

package dev.soko.e2e;

import static dev.soko.e2e.BenchOutput.loadAverage;
import static dev.soko.e2e.BenchOutput.progress;
import static dev.soko.e2e.BenchOutput.seconds;
import static dev.soko.e2e.DefaultInstall.XFS;

import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * What Velero's CSI snapshot data mover costs with Soko (hack/bench-velero.sh), on the local
 * cluster with Velero and its MinIO store ({@code hack/velero.sh}). For a filesystem (xfs) and a
 * block claim of 1 GiB holding 512 MiB of random data on the second node: the time of a backup that
 * moves the snapshot's data to MinIO, then, after 16 MiB of random 4 KiB writes, the time and the
 * bytes of a second backup, and the time of the restore onto the first node (the second one
 * cordoned) until the backup's Restore completes and until its pod runs, the data's sha256 checked
 * there. Beside them, the plain copy of the same bytes on this machine: a 512 MiB random file
 * copied with {@code cp --sparse=always} and synced on the disk that holds the nodes' pools and the
 * store, caches dropped first as before each backup and restore.
 *
 * <p>A backup's upload is read two ways: the growth of MinIO's data folder (every object kopia
 * wrote, its indexes included) and the DataUpload's {@code status.incrementalBytes} (Velero's
 * figure: the bytes of files kopia did not find unchanged in its cache, which counts a changed file
 * or a block device whole, before deduplication).
 *
 * <p>Arguments: the modes to measure ({@code filesystem}, {@code block}; default both). Prints a
 * Markdown table on stdout, progress on stderr.
 */
public final class VeleroBench {
  private static final String NAMESPACE = "bench-velero";
  private static final String VELERO = "velero";
  private static final long MIB = 1024 * 1024;
  private static final int WRITTEN_MIB = 512;
  private static final int RANDOM_WRITES = 4096;
  private static final int WRITE_SIZE = 4096;
  private static final Duration LONG = Duration.ofMinutes(10);

  private final LocalCluster cluster;
  private final KubernetesClient client;
  private final Workloads apps;
  private final String source;
  private final String target;

  private VeleroBench(LocalCluster cluster, KubernetesClient client) {
    this.cluster = cluster;
    this.client = client;
    this.apps = new Workloads(client, NAMESPACE, cluster.imageRegistry);
    // The first node holds the store and is where the restore lands; the data starts elsewhere.
    this.target = cluster.nodes.get(0);
    this.source = cluster.nodes.get(1);
  }

  public static void main(String[] args) throws Exception {
    List<String> modes = args.length == 0 ? List.of("filesystem", "block") : List.of(args);
    LocalCluster cluster = LocalCluster.fromEnvironment();
    if (cluster.nodes.size() < 2) {
      throw new IllegalStateException("a restore onto another node needs two nodes");
    }
    try (KubernetesClient client = cluster.client()) {
      DefaultInstall.helm(
          cluster,
          "install",
          LocalCluster.REPO.resolve("helm/soko"),
          DefaultInstall.values(cluster.imageRegistry, DefaultInstall.spec() + "  velero: true\n"));
      DefaultInstall.awaitReady(client, NAMESPACE);
      cluster.velero("up");
      try {
        VeleroBench bench = new VeleroBench(cluster, client);
        double plain = bench.plainCopySeconds();
        List<Row> rows = new ArrayList<>();
        for (String mode : modes) {
          rows.add(bench.round(mode, plain));
        }
        System.out.print(table(rows));
      } finally {
        cluster.velero("down");
        DefaultInstall.uninstall(cluster, client, NAMESPACE, LONG);
      }
    }
  }

  record Row(
      String mode,
      String load,
      double plainSeconds,
      double backupSeconds,
      long backupMoveSeconds,
      double secondBackupSeconds,
      double restoreSeconds,
      long restoreMoveSeconds,
      double runningSeconds,
      long firstUpload,
      long secondUpload,
      long secondIncrementalBytes) {}

  private Row round(String mode, double plain) throws Exception {
    boolean block = mode.equals("block");
    String load = loadAverage();
    apps.createNamespace();
    apps.create(apps.claim("data", XFS, "1Gi", block));
    List<String> cordoned = cluster.cordonAllBut(source);
    try {
      apps.create(apps.pod("app", "data", block, false));
      apps.awaitRunning("app", LONG);
    } finally {
      cluster.uncordon(cordoned);
    }
    String file = block ? Workloads.DEVICE : Workloads.MOUNT + "/blob";
    progress("%s: writing %d MiB of random data to %s on %s", mode, WRITTEN_MIB, file, source);
    apps.sh(
        "app",
        "dd if=/dev/urandom of=" + file + " bs=1M count=" + WRITTEN_MIB + " conv=fsync 2>&1");

    long stored = storeBytes();
    double backup = backup(mode + "-1");
    long backupMove = moveSeconds("DataUpload", "velero.io/backup-name", mode + "-1");
    long firstUpload = storeBytes() - stored;
    progress("%s: first backup %.1f s, %d bytes into the store", mode, backup, firstUpload);

    progress("%s: %d random writes of %d bytes", mode, RANDOM_WRITES, WRITE_SIZE);
    long blocks = WRITTEN_MIB * MIB / WRITE_SIZE;
    apps.sh(
        "app",
        "i=0; while [ $i -lt "
            + RANDOM_WRITES
            + " ]; do dd if=/dev/urandom of="
            + file
            + " bs="
            + WRITE_SIZE
            + " count=1 seek=$(( (RANDOM * 32768 + RANDOM) % "
            + blocks
            + " )) conv=notrunc 2>/dev/null; i=$((i+1)); done; sync");
    String sha = sha256(file);

    stored = storeBytes();
    double second = backup(mode + "-2");
    long secondUpload = storeBytes() - stored;
    long incremental = incrementalBytes(mode + "-2");
    progress(
        "%s: second backup %.1f s, %d bytes into the store, DataUpload incrementalBytes %d",
        mode, second, secondUpload, incremental);

    deleteNamespace();
    cordoned = cluster.cordonAllBut(target);
    double restore;
    double running;
    long restoreMove;
    try {
      dropCaches();
      long started = System.nanoTime();
      client.resource(restore(mode + "-2")).create();
      GenericKubernetesResource restored =
          Await.until(
              "restore " + NAMESPACE + "-" + mode + "-2 finished",
              LONG,
              () -> velero("Restore", NAMESPACE + "-" + mode + "-2"),
              VeleroBench::isFinished);
      requirePhase(restored, "Completed");
      restore = seconds(started);
      restoreMove = moveSeconds("DataDownload", "velero.io/restore-name", mode + "-2");
      Pod pod = apps.awaitRunning("app", LONG);
      running = seconds(started);
      if (!target.equals(pod.getSpec().getNodeName())) {
        throw new IllegalStateException("the restored pod runs on " + pod.getSpec().getNodeName());
      }
    } finally {
      cluster.uncordon(cordoned);
    }
    String restoredSha = sha256(file);
    if (!restoredSha.equals(sha)) {
      throw new IllegalStateException(
          mode + ": restored sha256 " + restoredSha + ", backed up " + sha);
    }
    progress(
        "%s: restored on %s in %.1f s (pod running at %.1f s)", mode, target, restore, running);
    deleteNamespace();
    return new Row(
        mode,
        load,
        plain,
        backup,
        backupMove,
        second,
        restore,
        restoreMove,
        running,
        firstUpload,
        secondUpload,
        incremental);
  }

  /** A backup of the namespace with snapshot data movement, timed until it completes. */
  private double backup(String suffix) throws Exception {
    String name = NAMESPACE + "-" + suffix;
    dropCaches();
    long started = System.nanoTime();
    client.resource(backupNamed(name)).create();
    GenericKubernetesResource done =
        Await.until(
            "backup " + name + " finished",
            LONG,
            () -> velero("Backup", name),
            VeleroBench::isFinished);
    requirePhase(done, "Completed");
    return seconds(started);
  }

  /**
   * The seconds Velero's data movers spent on a backup's or restore's volumes: from the first
   * DataUpload's (DataDownload's) start to the last one's completion, as their status says (whole
   * seconds); the rest of the backup's time is the snapshot, the exposing pod and the polling.
   */
  private long moveSeconds(String kind, String label, String suffix) {
    List<GenericKubernetesResource> moves =
        client
            .genericKubernetesResources("velero.io/v2alpha1", kind)
            .inNamespace(VELERO)
            .withLabel(label, NAMESPACE + "-" + suffix)
            .list()
            .getItems();
    Instant start =
        moves.stream()
            .map(m -> Instant.parse((String) Workloads.field(m, "status", "startTimestamp")))
            .min(Instant::compareTo)
            .orElseThrow();
    Instant end =
        moves.stream()
            .map(m -> Instant.parse((String) Workloads.field(m, "status", "completionTimestamp")))
            .max(Instant::compareTo)
            .orElseThrow();
    return Duration.between(start, end).toSeconds();
  }

  private long incrementalBytes(String suffix) {
    return client
        .genericKubernetesResources("velero.io/v2alpha1", "DataUpload")
        .inNamespace(VELERO)
        .withLabel("velero.io/backup-name", NAMESPACE + "-" + suffix)
        .list()
        .getItems()
        .stream()
        .map(u -> Workloads.field(u, "status", "incrementalBytes"))
        .filter(Objects::nonNull)
        .mapToLong(v -> ((Number) v).longValue())
        .sum();
  }

  private String sha256(String file) {
    String read =
        file.equals(Workloads.DEVICE)
            ? "dd if=" + file + " bs=1M count=" + WRITTEN_MIB + " 2>/dev/null | sha256sum"
            : "sha256sum < " + file;
    return apps.sh("app", read).split("\\s+")[0];
  }

  private void deleteNamespace() {
    List<String> volumes =
        client.persistentVolumeClaims().inNamespace(NAMESPACE).list().getItems().stream()
            .map(c -> c.getSpec().getVolumeName())
            .filter(Objects::nonNull)
            .toList();
    client.namespaces().withName(NAMESPACE).delete();
    Await.until(
        "namespace " + NAMESPACE + " gone",
        LONG,
        () -> client.namespaces().withName(NAMESPACE).get(),
        Objects::isNull);
    for (String pv : volumes) {
      Await.until(
          "PV " + pv + " deleted",
          LONG,
          () -> client.persistentVolumes().withName(pv).get(),
          Objects::isNull);
    }
  }

  /**
   * The bytes in MinIO's data folder: its pod's emptyDir, in the kubelet folder of the node it runs
   * on (hack/local-cluster.sh keeps a node's /var/lib/kubelet under its state folder).
   */
  private long storeBytes() throws IOException {
    Pod minio =
        client.pods().inNamespace("minio").withLabel("app", "minio").list().getItems().stream()
            .filter(p -> "Running".equals(p.getStatus().getPhase()))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("MinIO does not run"));
    Path data =
        cluster
            .stateDir
            .resolve("nodes")
            .resolve(minio.getSpec().getNodeName())
            .resolve("root/var/lib/kubelet/pods")
            .resolve(minio.getMetadata().getUid())
            .resolve("volumes/kubernetes.io~empty-dir/data");
    try (Stream<Path> files = Files.walk(data)) {
      return files.filter(Files::isRegularFile).mapToLong(VeleroBench::size).sum();
    }
  }

  /** The physical limit: the same bytes copied and synced on the disk the pools are on. */
  private double plainCopySeconds() throws Exception {
    Path work = Files.createTempDirectory(cluster.stateDir, "bench-velero-");
    try {
      Path from = work.resolve("from");
      Path to = work.resolve("to");
      LocalCluster.run(
          List.of(
              "dd", "if=/dev/urandom", "of=" + from, "bs=1M", "count=" + WRITTEN_MIB, "conv=fsync"),
          600);
      dropCaches();
      long started = System.nanoTime();
      LocalCluster.run(List.of("cp", "--sparse=always", from.toString(), to.toString()), 600);
      LocalCluster.run(List.of("sync", "-f", to.toString()), 600);
      double seconds = seconds(started);
      progress("plain copy of %d MiB: %.1f s", WRITTEN_MIB, seconds);
      return seconds;
    } finally {
      LocalCluster.run(List.of("rm", "-rf", work.toString()), 60);
    }
  }

  private GenericKubernetesResource velero(String kind, String name) {
    return client
        .genericKubernetesResources("velero.io/v1", kind)
        .inNamespace(VELERO)
        .withName(name)
        .get();
  }

  private static GenericKubernetesResource backupNamed(String name) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("velero.io/v1")
        .withKind("Backup")
        .withNewMetadata()
        .withName(name)
        .withNamespace(VELERO)
        .endMetadata()
        .addToAdditionalProperties(
            "spec",
            Map.of(
                "includedNamespaces",
                List.of(NAMESPACE),
                "snapshotMoveData",
                true,
                "storageLocation",
                "default"))
        .build();
  }

  private static GenericKubernetesResource restore(String suffix) {
    String name = NAMESPACE + "-" + suffix;
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("velero.io/v1")
        .withKind("Restore")
        .withNewMetadata()
        .withName(name)
        .withNamespace(VELERO)
        .endMetadata()
        .addToAdditionalProperties("spec", Map.of("backupName", name))
        .build();
  }

  private static boolean isFinished(GenericKubernetesResource r) {
    Object phase = r == null ? null : Workloads.field(r, "status", "phase");
    return phase != null
        && List.of("Completed", "PartiallyFailed", "Failed", "FailedValidation")
            .contains(phase.toString());
  }

  private static void requirePhase(GenericKubernetesResource r, String phase) {
    Object actual = Workloads.field(r, "status", "phase");
    if (!phase.equals(actual)) {
      throw new IllegalStateException(
          r.getKind() + " " + r.getMetadata().getName() + " ended " + actual + ": " + r);
    }
  }

  private static String table(List<Row> rows) {
    StringBuilder out = new StringBuilder();
    out.append(
        "| claim (1 GiB, 512 MiB random) | plain copy | backup (data mover's part) | restore on the"
            + " other node (data mover's part; pod running) | 2nd backup after 16 MiB of 4 KiB writes | 1st upload (store)"
            + " | 2nd upload (store) | 2nd upload (DataUpload incrementalBytes) | load |\n");
    out.append("|---|---|---|---|---|---|---|---|---|\n");
    long written = (long) RANDOM_WRITES * WRITE_SIZE;
    for (Row r : rows) {
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %.1f s | %.1f s = %.1f× (%d s) | %.1f s = %.1f× (%d s; %.1f s) | %.1f s | %s"
                  + " | %s (%.2f× the bytes written) | %s | %s |%n",
              r.mode(),
              r.plainSeconds(),
              r.backupSeconds(),
              r.backupSeconds() / r.plainSeconds(),
              r.backupMoveSeconds(),
              r.restoreSeconds(),
              r.restoreSeconds() / r.plainSeconds(),
              r.restoreMoveSeconds(),
              r.runningSeconds(),
              r.secondBackupSeconds(),
              mib(r.firstUpload()),
              mib(r.secondUpload()),
              (double) r.secondUpload() / written,
              mib(r.secondIncrementalBytes()),
              r.load()));
    }
    return out.toString();
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", (double) bytes / MIB);
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      return 0; // an object MinIO removed meanwhile (a temporary part)
    }
  }

  private static void dropCaches() throws Exception {
    LocalCluster.run(List.of("sync"), 120);
    Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
  }
}

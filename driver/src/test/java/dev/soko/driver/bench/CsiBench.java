package dev.soko.driver.bench;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Measures one CSI driver through the same client and socket a kubelet would use: start to ready
 * Probe, idle and peak memory, CreateVolume+DeleteVolume latency at concurrency 1 and 16, the
 * stage/publish/unpublish/unstage cycle, and CreateSnapshot of a volume holding 512 MiB of data.
 *
 * <p>Usage: {@code CsiBench NAME SOCKET MOUNTDIR RESULTS -- DRIVER COMMAND...}. The results file
 * gets one {@code metric<TAB>value} line per figure; hack/bench.sh puts drivers side by side.
 */
public final class CsiBench {
  private static final long MIB = 1024 * 1024;
  private static final int WARMUP_OPS = 50;
  private static final int SEQUENTIAL_OPS = 200;
  private static final int CONCURRENCY = 16;
  private static final int OPS_PER_WORKER = 10;
  private static final int CYCLES = 20;

  /** Calls after which both a JIT (Soko) and Go's runtime (peers) have reached steady state. */
  private static final int STEADY_WARMUP_OPS = 2000;

  private final String name;
  private final CsiClient csi;
  private final Path mountDir;
  private final Csi.VolumeCapability capability;
  private final AtomicInteger sequence = new AtomicInteger();

  private CsiBench(String name, CsiClient csi, Path mountDir, String fsType) {
    this.name = name;
    this.csi = csi;
    this.mountDir = mountDir;
    this.capability = Requests.mount(fsType);
  }

  public static void main(String[] args) throws Exception {
    int separator = Arrays.asList(args).indexOf("--");
    if (separator != 4 || args.length < 6) {
      System.err.println("usage: CsiBench NAME SOCKET MOUNTDIR RESULTS -- DRIVER COMMAND...");
      System.exit(2);
    }
    String name = args[0];
    Path socket = Path.of(args[1]);
    Path mountDir = Path.of(args[2]);
    Path results = Path.of(args[3]);
    List<String> command = List.of(args).subList(5, args.length);
    String fsType = System.getProperty("bench.fsType", "ext4");

    Map<String, String> figures = new LinkedHashMap<>();
    Path log = results.resolveSibling(name + "-driver.log");
    try (CsiClient csi = new CsiClient(socket);
        DriverProcess driver = startAfterWarmingUp(csi, command, log)) {
      if (!csi.awaitReady(socket, Duration.ofSeconds(60))) {
        throw new IllegalStateException(name + " did not become ready; see " + log);
      }
      figures.put("ready_ms", ms((System.nanoTime() - driver.startedNanos) / 1e6));
      Thread.sleep(2000); // let start-up work settle before reading idle memory
      figures.put("idle_rss_mib", mib(driver.rssMib()));
      new CsiBench(name, csi, mountDir, fsType).measure(figures);
      figures.put("peak_rss_mib", mib(driver.peakRssMib()));
      if (!driver.alive()) {
        throw new IllegalStateException(name + " died during the benchmark; see " + log);
      }
    }
    StringBuilder out = new StringBuilder();
    figures.forEach((k, v) -> out.append(k).append('\t').append(v).append('\n'));
    Files.writeString(results, out);
    System.out.print(out);
  }

  /**
   * Starts the driver once the client has made a call (to a socket that is not there yet): the
   * client JVM's first call loads and links gRPC's call path, a few hundred ms on this host, which
   * is the client's start and not the driver's.
   */
  private static DriverProcess startAfterWarmingUp(CsiClient csi, List<String> command, Path log)
      throws IOException, InterruptedException {
    try {
      csi.identity()
          .withDeadlineAfter(100, TimeUnit.MILLISECONDS)
          .probe(Csi.ProbeRequest.getDefaultInstance());
    } catch (StatusRuntimeException expected) {
      // nothing listens yet: the call was made to load the client's classes
    }
    return DriverProcess.start(command, log);
  }

  private void measure(Map<String, String> figures) throws Exception {
    // Two views of the lifecycle. "First calls": right after start, past a short warm-up that
    // every driver gets alike; a JIT (Soko) is still compiling there while a Go binary (peers) has
    // nothing to compile. "Steady": after 2,000 more calls, what a long-running node plugin sees.
    Latencies warmup = new Latencies();
    for (int i = 0; i < WARMUP_OPS; i++) {
      createDelete(warmup);
    }
    measureLifecycle(figures, "");
    for (int i = 0; i < STEADY_WARMUP_OPS; i++) {
      createDelete(warmup);
    }
    measureLifecycle(figures, "_steady");

    Csi.Volume volume = create(256 * MIB);
    Latencies cycles = new Latencies();
    String staging = dir("staging-cycle");
    String target = dir("target-cycle");
    for (int i = -CYCLES / 4; i < CYCLES; i++) { // the first quarter is warm-up, not measured
      long start = System.nanoTime();
      csi.node().nodeStageVolume(Requests.stage(volume, staging, capability));
      csi.node().nodePublishVolume(Requests.publish(volume, staging, target, capability));
      csi.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target));
      csi.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
      if (i >= 0) {
        cycles.add((System.nanoTime() - start) / 1e6);
      }
    }
    delete(volume);
    figures.put("stage_publish_cycle_p50_ms", ms(cycles.percentile(50)));
    figures.put("stage_publish_cycle_p99_ms", ms(cycles.percentile(99)));

    figures.put("snapshot_512mib_ms", ms(snapshotOfWrittenVolume()));
  }

  /** CreateVolume+DeleteVolume pairs, one at a time and then 16 at once. */
  private void measureLifecycle(Map<String, String> figures, String suffix) throws Exception {
    Latencies sequential = new Latencies();
    for (int i = 0; i < SEQUENTIAL_OPS; i++) {
      createDelete(sequential);
    }
    figures.put("create_delete_c1_p50_ms" + suffix, ms(sequential.percentile(50)));
    figures.put("create_delete_c1_p99_ms" + suffix, ms(sequential.percentile(99)));

    Latencies concurrent = new Latencies();
    ExecutorService pool = Executors.newFixedThreadPool(CONCURRENCY);
    List<Future<?>> workers = new ArrayList<>();
    for (int w = 0; w < CONCURRENCY; w++) {
      workers.add(
          pool.submit(
              () -> {
                for (int i = 0; i < OPS_PER_WORKER; i++) {
                  createDelete(concurrent);
                }
                return null;
              }));
    }
    for (Future<?> worker : workers) {
      worker.get();
    }
    pool.shutdown();
    figures.put("create_delete_c16_p50_ms" + suffix, ms(concurrent.percentile(50)));
    figures.put("create_delete_c16_p99_ms" + suffix, ms(concurrent.percentile(99)));
  }

  private double snapshotOfWrittenVolume() throws Exception {
    Csi.Volume volume = create(1024 * MIB);
    String staging = dir("staging-snap");
    String target = dir("target-snap");
    csi.node().nodeStageVolume(Requests.stage(volume, staging, capability));
    csi.node().nodePublishVolume(Requests.publish(volume, staging, target, capability));
    writeData(Path.of(target, "data.bin"), 512 * MIB);
    long start = System.nanoTime();
    Csi.Snapshot snapshot =
        csi.controller()
            .createSnapshot(Requests.createSnapshot(name + "-snap", volume.getVolumeId()))
            .getSnapshot();
    double millis = (System.nanoTime() - start) / 1e6;
    if (!snapshot.getReadyToUse()) {
      throw new IllegalStateException("snapshot not ready to use: " + snapshot);
    }
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshot.getSnapshotId()));
    csi.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target));
    csi.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    delete(volume);
    return millis;
  }

  private void createDelete(Latencies latencies) {
    long start = System.nanoTime();
    delete(create(64 * MIB));
    latencies.add((System.nanoTime() - start) / 1e6);
  }

  private Csi.Volume create(long bytes) {
    String volumeName = name + "-bench-" + sequence.incrementAndGet();
    return csi.controller()
        .createVolume(Requests.createVolume(volumeName, bytes, capability))
        .getVolume();
  }

  private void delete(Csi.Volume volume) {
    csi.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
  }

  private String dir(String leaf) throws IOException {
    return Files.createDirectories(mountDir.resolve(name + "-" + leaf)).toString();
  }

  /** Writes incompressible data and forces it to the device, so the snapshot copies real blocks. */
  private static void writeData(Path file, long bytes) throws IOException {
    byte[] chunk = new byte[(int) (4 * MIB)];
    java.util.Random random = new java.util.Random(7);
    try (OutputStream out = Files.newOutputStream(file)) {
      for (long done = 0; done < bytes; done += chunk.length) {
        random.nextBytes(chunk);
        out.write(chunk);
      }
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
  }

  private static String ms(double millis) {
    return String.format("%.1f", millis);
  }

  private static String mib(double mib) {
    return String.format("%.1f", mib);
  }
}

package dev.soko.driver.bench;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.TreeSet;

/**
 * What changed block tracking costs, through a running driver's socket (hack/bench-cbt.sh): a block
 * volume of each size is filled, snapshotted, 1 % of its 4 KiB blocks are rewritten at random,
 * snapshotted again, and GetMetadataDelta between the two is timed, with the driver's CPU time and
 * resident memory around it; beside it, what a backup without it reads: the whole snapshot. Each
 * answer is checked against the blocks written: none may be missing. Each delta is asked twice: of
 * the node's socket, and through the controller's relay ({@link RelayHost}, a process of its own),
 * which forwards it to the node's data port over mutual TLS on loopback as in a cluster; the second
 * row gives the relay's CPU time and memory beside the node's.
 *
 * <p>Usage: {@code DeltaCost SOCKET MOUNTDIR DRIVER_PID POOL_DIR RELAY_SOCKET RELAY_PID
 * SIZE_GIB...} prints two Markdown table rows per size.
 */
public final class DeltaCost {
  private static final long K = 4096;
  private static final long MIB = 1024 * 1024;
  private static final long GIB = 1024 * MIB;
  private static final Csi.VolumeCapability BLOCK = Requests.block();

  private final CsiClient csi;
  private final CsiClient relay;
  private final Path mountDir;
  private final long driverPid;
  private final long relayPid;
  private final Path poolDir;

  private DeltaCost(
      CsiClient csi, CsiClient relay, Path mountDir, long driverPid, long relayPid, Path poolDir) {
    this.csi = csi;
    this.relay = relay;
    this.mountDir = mountDir;
    this.driverPid = driverPid;
    this.relayPid = relayPid;
    this.poolDir = poolDir;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 7) {
      System.err.println(
          "usage: DeltaCost SOCKET MOUNTDIR DRIVER_PID POOL_DIR RELAY_SOCKET RELAY_PID"
              + " SIZE_GIB...");
      System.exit(2);
    }
    try (CsiClient csi = new CsiClient(Path.of(args[0]));
        CsiClient relay = new CsiClient(Path.of(args[4]))) {
      DeltaCost bench =
          new DeltaCost(
              csi,
              relay,
              Path.of(args[1]),
              Long.parseLong(args[2]),
              Long.parseLong(args[5]),
              Path.of(args[3]));
      System.out.println(
          "| volume | asked of | blocks rewritten | GetMetadataDelta | ranges answered | blocks"
              + " missed | extra bytes | node driver CPU | node driver RSS after (peak) | relay"
              + " CPU | relay RSS after (peak) | GetMetadataAllocated | full read of the"
              + " snapshot |");
      System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
      for (int i = 6; i < args.length; i++) {
        bench.rows(Long.parseLong(args[i])).forEach(System.out::println);
      }
    }
  }

  private List<String> rows(long gib) throws Exception {
    long bytes = gib * GIB;
    Csi.Volume volume =
        csi.controller()
            .createVolume(Requests.createVolume("cbt-" + gib, bytes, BLOCK))
            .getVolume();
    String staging = mountDir.resolve("staging-" + gib).toString();
    Path device = mountDir.resolve("dev-" + gib);
    csi.node().nodeStageVolume(Requests.stage(volume, staging, BLOCK));
    csi.node().nodePublishVolume(Requests.publish(volume, staging, device.toString(), BLOCK));
    fill(device, bytes);
    String base = snapshot("cbt-" + gib + "-a", volume);
    TreeSet<Long> written = rewriteOnePercent(device, bytes, gib);
    String target = snapshot("cbt-" + gib + "-b", volume);

    String direct = asked(csi, "the node's socket", gib, base, target, written);
    String relayed = asked(relay, "the controller's relay", gib, base, target, written);
    double fullRead = readWhole(poolDir.resolve("snapshots").resolve(target + ".img"));

    csi.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), device.toString()));
    csi.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(base));
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(target));
    csi.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
    return List.of(
        direct + String.format(Locale.ROOT, " %.1f s |", fullRead), relayed + " (as above) |");
  }

  /**
   * One row but its last cell: GetMetadataDelta and GetMetadataAllocated asked of {@code client},
   * timed, with the node's and the relay's CPU time and memory around the delta.
   */
  private String asked(
      CsiClient client, String of, long gib, String base, String target, TreeSet<Long> written)
      throws Exception {
    boolean relayed = client == relay;
    long cpuBefore = cpuTicks(driverPid);
    long relayCpuBefore = cpuTicks(relayPid);
    long start = System.nanoTime();
    Iterator<Csi.GetMetadataDeltaResponse> delta =
        client
            .snapshotMetadata()
            .getMetadataDelta(
                Csi.GetMetadataDeltaRequest.newBuilder()
                    .setBaseSnapshotId(base)
                    .setTargetSnapshotId(target)
                    .build());
    long ranges = 0;
    long answered = 0;
    TreeSet<Long> missing = new TreeSet<>(written);
    while (delta.hasNext()) {
      for (Csi.BlockMetadata m : delta.next().getBlockMetadataList()) {
        ranges++;
        answered += m.getSizeBytes();
        missing.subSet(m.getByteOffset(), m.getByteOffset() + m.getSizeBytes()).clear();
      }
    }
    double deltaSeconds = (System.nanoTime() - start) / 1e9;
    double cpuSeconds = (cpuTicks(driverPid) - cpuBefore) / 100.0;
    double relayCpuSeconds = (cpuTicks(relayPid) - relayCpuBefore) / 100.0;
    String memory = memory(driverPid);
    String relayMemory = memory(relayPid);

    start = System.nanoTime();
    Iterator<Csi.GetMetadataAllocatedResponse> allocated =
        client
            .snapshotMetadata()
            .getMetadataAllocated(
                Csi.GetMetadataAllocatedRequest.newBuilder().setSnapshotId(target).build());
    allocated.forEachRemaining(m -> {});
    double allocatedSeconds = (System.nanoTime() - start) / 1e9;
    return String.format(
        Locale.ROOT,
        "| %d GiB | %s | %,d | %.2f s | %,d | %d | %,d | %.2f s | %s | %s | %s | %.2f s |",
        gib,
        of,
        written.size(),
        deltaSeconds,
        ranges,
        missing.size(),
        answered - written.size() * K,
        cpuSeconds,
        memory,
        relayed ? String.format(Locale.ROOT, "%.2f s", relayCpuSeconds) : "-",
        relayed ? relayMemory : "-",
        allocatedSeconds);
  }

  private String snapshot(String name, Csi.Volume volume) {
    return csi.controller()
        .createSnapshot(Requests.createSnapshot(name, volume.getVolumeId()))
        .getSnapshot()
        .getSnapshotId();
  }

  /** Writes every byte of the device once, in 4 MiB writes. */
  private static void fill(Path device, long bytes) throws IOException {
    ByteBuffer chunk = ByteBuffer.allocateDirect((int) (4 * MIB));
    new Random(1).ints((int) (MIB)).forEach(chunk::putInt);
    try (FileChannel channel = FileChannel.open(device, StandardOpenOption.WRITE)) {
      for (long at = 0; at < bytes; at += chunk.capacity()) {
        chunk.clear();
        channel.write(chunk, at);
      }
      channel.force(true);
    }
  }

  /** Rewrites 1 % of the device's 4 KiB blocks, chosen at random; returns their offsets. */
  private static TreeSet<Long> rewriteOnePercent(Path device, long bytes, long seed)
      throws IOException {
    long blocks = bytes / K;
    TreeSet<Long> offsets = new TreeSet<>();
    Random random = new Random(seed);
    while (offsets.size() < blocks / 100) {
      offsets.add((long) (random.nextDouble() * blocks) * K);
    }
    ByteBuffer block = ByteBuffer.allocateDirect((int) K);
    try (FileChannel channel = FileChannel.open(device, StandardOpenOption.WRITE)) {
      for (long offset : offsets) {
        block.clear();
        block.putLong(0, offset ^ 0x5eedL);
        channel.write(block, offset);
      }
      channel.force(true);
    }
    return offsets;
  }

  /** Seconds to read {@code file} whole from the disk (caches dropped first). */
  private static double readWhole(Path file) throws IOException, InterruptedException {
    Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
    long start = System.nanoTime();
    ByteBuffer buffer = ByteBuffer.allocateDirect((int) (4 * MIB));
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      while (channel.read(buffer) > 0) {
        buffer.clear();
      }
    }
    return (System.nanoTime() - start) / 1e9;
  }

  /** A process's user and system time in clock ticks (100 a second on Linux). */
  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }

  /** A process's resident memory now and at its peak. */
  private static String memory(long pid) throws IOException {
    return status(pid, "VmRSS") + " (" + status(pid, "VmHWM") + ")";
  }

  private static String status(long pid, String field) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith(field + ":")) {
        long kib = Long.parseLong(line.substring(field.length() + 1).strip().split("\\s+")[0]);
        return (kib / 1024) + " MiB";
      }
    }
    return "?";
  }
}

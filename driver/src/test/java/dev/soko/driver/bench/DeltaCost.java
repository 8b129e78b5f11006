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
import java.util.Locale;
import java.util.Random;
import java.util.TreeSet;

/**
 * What changed block tracking costs, through a running driver's socket (hack/bench-cbt.sh): a block
 * volume of each size is filled, snapshotted, 1 % of its 4 KiB blocks are rewritten at random,
 * snapshotted again, and GetMetadataDelta between the two is timed, with the driver's CPU time and
 * resident memory around it; beside it, what a backup without it reads: the whole snapshot. Each
 * answer is checked against the blocks written: none may be missing.
 *
 * <p>Usage: {@code DeltaCost SOCKET MOUNTDIR DRIVER_PID POOL_DIR SIZE_GIB...} prints one Markdown
 * table row per size.
 */
public final class DeltaCost {
  private static final long K = 4096;
  private static final long MIB = 1024 * 1024;
  private static final long GIB = 1024 * MIB;
  private static final Csi.VolumeCapability BLOCK = Requests.block();

  private final CsiClient csi;
  private final Path mountDir;
  private final long driverPid;
  private final Path poolDir;

  private DeltaCost(CsiClient csi, Path mountDir, long driverPid, Path poolDir) {
    this.csi = csi;
    this.mountDir = mountDir;
    this.driverPid = driverPid;
    this.poolDir = poolDir;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 5) {
      System.err.println("usage: DeltaCost SOCKET MOUNTDIR DRIVER_PID POOL_DIR SIZE_GIB...");
      System.exit(2);
    }
    try (CsiClient csi = new CsiClient(Path.of(args[0]))) {
      DeltaCost bench =
          new DeltaCost(csi, Path.of(args[1]), Long.parseLong(args[2]), Path.of(args[3]));
      System.out.println(
          "| volume | blocks rewritten | GetMetadataDelta | ranges answered | blocks missed |"
              + " extra bytes | driver CPU | driver RSS after (peak) | GetMetadataAllocated |"
              + " full read of the snapshot |");
      System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
      for (int i = 4; i < args.length; i++) {
        System.out.println(bench.row(Long.parseLong(args[i])));
      }
    }
  }

  private String row(long gib) throws Exception {
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

    long cpuBefore = cpuTicks();
    long start = System.nanoTime();
    Iterator<Csi.GetMetadataDeltaResponse> delta =
        csi.snapshotMetadata()
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
    double cpuSeconds = (cpuTicks() - cpuBefore) / 100.0;
    String memory = status("VmRSS") + " (" + status("VmHWM") + ")";

    start = System.nanoTime();
    Iterator<Csi.GetMetadataAllocatedResponse> allocated =
        csi.snapshotMetadata()
            .getMetadataAllocated(
                Csi.GetMetadataAllocatedRequest.newBuilder().setSnapshotId(target).build());
    allocated.forEachRemaining(m -> {});
    double allocatedSeconds = (System.nanoTime() - start) / 1e9;
    double fullRead = readWhole(poolDir.resolve("snapshots").resolve(target + ".img"));

    csi.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), device.toString()));
    csi.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(base));
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(target));
    csi.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
    return String.format(
        Locale.ROOT,
        "| %d GiB | %,d | %.2f s | %,d | %d | %,d | %.2f s | %s | %.2f s | %.1f s |",
        gib,
        written.size(),
        deltaSeconds,
        ranges,
        missing.size(),
        answered - written.size() * K,
        cpuSeconds,
        memory,
        allocatedSeconds,
        fullRead);
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

  /** The driver's user and system time in clock ticks (100 a second on Linux). */
  private long cpuTicks() throws IOException {
    String stat = Files.readString(Path.of("/proc/" + driverPid + "/stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }

  private String status(String field) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + driverPid + "/status"))) {
      if (line.startsWith(field + ":")) {
        long kib = Long.parseLong(line.substring(field.length() + 1).strip().split("\\s+")[0]);
        return (kib / 1024) + " MiB";
      }
    }
    return "?";
  }
}

package dev.soko.driver.bench;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import dev.soko.driver.transfer.DataTls;
import dev.soko.driver.transfer.SnapshotReader;
import dev.soko.driver.transfer.TestCertificates;
import dev.soko.driver.volume.RemoteSnapshot;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * What a restore on another node costs (hack/bench-restore.sh): a node-mode driver serves its data
 * port over mutual TLS on loopback; a 1 GiB block volume on its pool holds 512 MiB of random data
 * and is snapshotted; the snapshot is then copied into a second pool (another filesystem) twice,
 * caches dropped before each: by the data path's client, as a restore on another node copies it
 * (Describe, Read of the allocated ranges with their CRC32C, positional writes, fsync), and by
 * {@code cp --sparse=always} and a sync, the plain copy of the same bytes on this machine. All
 * copies are checked against the source image by sha256. The data path's first copy in the two
 * fresh JVMs is timed apart and not counted: its code is still being compiled then, while a
 * restoring node's driver has served calls before. The benchmark's JVM runs with the driver's JVM
 * flags (C1 only, a 48 MiB heap, unpooled buffers), since it stands for the restoring driver.
 *
 * <p>Usage: {@code RestoreCost WORKDIR DRIVER POOL_A POOL_B MIB_WRITTEN} prints a Markdown table.
 */
public final class RestoreCost {
  private static final long MIB = 1024 * 1024;
  private static final long VOLUME_BYTES = 1024 * MIB;
  private static final String ENDPOINT = "127.0.0.1:19813";

  private RestoreCost() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: RestoreCost WORKDIR DRIVER POOL_A POOL_B MIB_WRITTEN");
      System.exit(2);
    }
    Path work = Path.of(args[0]);
    Path poolA = Path.of(args[2]);
    Path poolB = Path.of(args[3]);
    long written = Long.parseLong(args[4]) * MIB;
    TestCertificates.Ca ca = TestCertificates.ca("bench-ca");
    Path certs = TestCertificates.directory(work.resolve("certs"), ca, "soko-node");
    Path mnt = Files.createDirectories(work.resolve("mnt"));
    List<String> command =
        List.of(
            args[1],
            "--endpoint=unix://" + work.resolve("a.sock"),
            "--node-id=node-a",
            "--mode=node",
            "--pool=name=a,path=" + poolA,
            "--allowed-path-root=" + mnt,
            "--data-address=" + ENDPOINT,
            "--data-tls-dir=" + certs,
            "--log-level=warn");
    try (DriverProcess driver = DriverProcess.start(command, work.resolve("driver.log"))) {
      waitForSocket(work.resolve("a.sock"), driver);
      try (CsiClient csi = new CsiClient(work.resolve("a.sock"));
          DataTls tls = DataTls.load(certs);
          SnapshotReader reader = new SnapshotReader(tls)) {
        String snapshot = snapshotHolding(csi, mnt, written);
        Path source = poolA.resolve("snapshots").resolve(snapshot + ".img");
        String want = sha256(source);

        Path plain = poolB.resolve("plain.img");
        dropCaches();
        long start = System.nanoTime();
        run("cp", "--sparse=always", source.toString(), plain.toString());
        run("sync", "-f", plain.toString());
        double plainSeconds = (System.nanoTime() - start) / 1e9;

        // The first copy in two fresh JVMs, whose data path is still being compiled; a restoring
        // node's driver has usually served calls for a while. Measured apart, then dropped.
        Path first = poolB.resolve("first.img");
        dropCaches();
        start = System.nanoTime();
        reader.describe("node-a", ENDPOINT, snapshot).orElseThrow().copyTo(first);
        double firstSeconds = (System.nanoTime() - start) / 1e9;
        check(first, want);
        Files.delete(first);

        Path restored = poolB.resolve("restored.img");
        dropCaches();
        long cpuBefore = cpuTicks(driver.pid());
        start = System.nanoTime();
        RemoteSnapshot remote = reader.describe("node-a", ENDPOINT, snapshot).orElseThrow();
        remote.copyTo(restored);
        double pathSeconds = (System.nanoTime() - start) / 1e9;
        double driverCpu = (cpuTicks(driver.pid()) - cpuBefore) / 100.0;

        check(plain, want);
        check(restored, want);
        System.out.println(
            "| volume | data in it | plain copy (cp --sparse, sync) | first copy over the data path"
                + " (fresh JVMs) | copy over the data path |"
                + " ratio | data path throughput | serving driver CPU | serving driver RSS"
                + " (peak) | allocated bytes of the copy |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        System.out.printf(
            Locale.ROOT,
            "| 1 GiB block | %d MiB | %.2f s | %.2f s | %.2f s | %.2fx | %.0f MiB/s | %.2f s | %.0f MiB"
                + " (%.0f MiB) | %d MiB |%n",
            written / MIB,
            plainSeconds,
            firstSeconds,
            pathSeconds,
            pathSeconds / plainSeconds,
            written / MIB / pathSeconds,
            driverCpu,
            driver.rssMib(),
            driver.peakRssMib(),
            allocatedBytes(restored) / MIB);
      }
    }
  }

  /** A snapshot of a new 1 GiB block volume whose first {@code bytes} hold random data. */
  private static String snapshotHolding(CsiClient csi, Path mnt, long bytes) throws IOException {
    Csi.VolumeCapability block = Requests.block();
    Csi.Volume volume =
        csi.controller()
            .createVolume(Requests.createVolume("restore-cost", VOLUME_BYTES, block))
            .getVolume();
    String staging = mnt.resolve("staging").toString();
    Path device = mnt.resolve("device");
    csi.node().nodeStageVolume(Requests.stage(volume, staging, block));
    csi.node().nodePublishVolume(Requests.publish(volume, staging, device.toString(), block));
    ByteBuffer chunk = ByteBuffer.allocateDirect((int) (4 * MIB));
    Random random = new Random(7);
    try (FileChannel channel = FileChannel.open(device, StandardOpenOption.WRITE)) {
      for (long at = 0; at < bytes; at += chunk.capacity()) {
        chunk.clear();
        while (chunk.hasRemaining()) {
          chunk.putLong(random.nextLong());
        }
        chunk.flip();
        channel.write(chunk, at);
      }
      channel.force(true);
    }
    String id =
        csi.controller()
            .createSnapshot(Requests.createSnapshot("restore-cost", volume.getVolumeId()))
            .getSnapshot()
            .getSnapshotId();
    csi.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), device.toString()));
    csi.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    return id;
  }

  private static void check(Path copy, String want) throws Exception {
    String got = sha256(copy);
    if (!got.equals(want)) {
      throw new IllegalStateException(copy + " differs from the snapshot: " + got + " " + want);
    }
  }

  private static String sha256(Path file) throws Exception {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    byte[] buffer = new byte[(int) (4 * MIB)];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private static long allocatedBytes(Path file) throws Exception {
    Process du = new ProcessBuilder("du", "-B1", file.toString()).start();
    String out = new String(du.getInputStream().readAllBytes()).trim();
    du.waitFor();
    return Long.parseLong(out.split("\\s+")[0]);
  }

  private static void run(String... command) throws Exception {
    Process process = new ProcessBuilder(command).inheritIO().start();
    if (process.waitFor() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed");
    }
  }

  private static void dropCaches() throws IOException {
    Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
  }

  private static void waitForSocket(Path socket, DriverProcess driver) throws Exception {
    for (int i = 0; i < 300 && !Files.exists(socket); i++) {
      if (!driver.alive()) {
        throw new IllegalStateException("the driver exited; see its log");
      }
      Thread.sleep(100);
    }
    if (!Files.exists(socket)) {
      throw new IllegalStateException("the driver did not create " + socket);
    }
  }

  /** A process's user and system time in clock ticks (100 a second on Linux). */
  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }
}

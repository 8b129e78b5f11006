package dev.soko.driver.bench;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Snapshot and clone times against the data a volume holds, through a running driver's socket
 * (hack/bench-data.sh): on the reflink pool (the driver's default pool), with 512 MiB and then 4
 * GiB written (a reflink copy should not care), and the same on a btrfs-subvolume pool when one is
 * named (a subvolume snapshot should not care either); on a pool without reflink, the driver's copy
 * speed beside {@code cp --sparse=always} of the same image file. Caches are dropped before each
 * copy, so every copy reads from the disk.
 *
 * <p>Usage: {@code SnapshotScaling SOCKET MOUNTDIR PLAIN_POOL_NAME PLAIN_POOL_DIR
 * [BTRFS_POOL_NAME]} prints {@code metric<TAB>value} lines; the btrfs pool's metrics start with
 * {@code btrfs_}.
 */
public final class SnapshotScaling {
  private static final long MIB = 1024 * 1024;
  private static final Csi.VolumeCapability EXT4 = Requests.mount("ext4");
  private static final Csi.VolumeCapability BTRFS = Requests.mount("btrfs");

  private final CsiClient csi;
  private final Path mountDir;

  private SnapshotScaling(CsiClient csi, Path mountDir) {
    this.csi = csi;
    this.mountDir = mountDir;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4 && args.length != 5) {
      System.err.println(
          "usage: SnapshotScaling SOCKET MOUNTDIR PLAIN_POOL PLAIN_POOL_DIR [BTRFS_POOL]");
      System.exit(2);
    }
    try (CsiClient csi = new CsiClient(Path.of(args[0]))) {
      SnapshotScaling bench = new SnapshotScaling(csi, Path.of(args[1]));
      bench.scaling("", "", EXT4);
      if (args.length == 5) {
        bench.scaling("btrfs_", args[4], BTRFS);
      }
      bench.plainCopy(args[2], Path.of(args[3]));
    }
  }

  /**
   * Snapshot and clone times of one volume in {@code pool} ("" for the default pool) as it holds
   * 512 MiB and then 4 GiB; metric names start with {@code prefix}.
   */
  private void scaling(String prefix, String pool, Csi.VolumeCapability capability)
      throws Exception {
    String name = prefix + "scaling";
    Csi.Volume volume = create(name, 5 * 1024 * MIB, pool, capability);
    Path data = publish(volume, name, capability);
    long written = append(data, 4 * MIB);
    // One unmeasured snapshot and clone first: the first copy of a run also pays class loading
    // and the first freeze, which would flatter the ratio.
    String warm =
        csi.controller()
            .createSnapshot(Requests.createSnapshot(name + "-warm-up", volume.getVolumeId()))
            .getSnapshot()
            .getSnapshotId();
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(warm));
    csi.controller()
        .deleteVolume(
            Requests.deleteVolume(
                csi.controller()
                    .createVolume(clone(prefix + "clone-warm-up", volume, pool, capability))
                    .getVolume()
                    .getVolumeId()));
    for (long goal : List.of(512 * MIB, 4096 * MIB)) {
      written += append(data, goal - written);
      String size = goal == 512 * MIB ? "512mib" : "4gib";
      dropCaches();
      long start = System.nanoTime();
      Csi.Snapshot snapshot =
          csi.controller()
              .createSnapshot(Requests.createSnapshot(name + "-" + size, volume.getVolumeId()))
              .getSnapshot();
      print(prefix + "snapshot_" + size + "_ms", (System.nanoTime() - start) / 1e6);
      csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshot.getSnapshotId()));
      dropCaches();
      start = System.nanoTime();
      Csi.Volume clone =
          csi.controller()
              .createVolume(clone(prefix + "clone-" + size, volume, pool, capability))
              .getVolume();
      print(prefix + "clone_" + size + "_ms", (System.nanoTime() - start) / 1e6);
      csi.controller().deleteVolume(Requests.deleteVolume(clone.getVolumeId()));
    }
    takeDown(volume, name);
  }

  private static Csi.CreateVolumeRequest clone(
      String name, Csi.Volume source, String pool, Csi.VolumeCapability capability) {
    return inPool(
        Requests.cloneVolume(name, source.getCapacityBytes(), capability, source.getVolumeId()),
        pool);
  }

  /** The driver's sparse copy (CreateSnapshot on a pool without reflink) beside cp. */
  private void plainCopy(String pool, Path poolDir) throws Exception {
    Csi.Volume volume = create("plain", 1024 * MIB, pool, EXT4);
    long bytes = append(publish(volume, "plain", EXT4), 512 * MIB);
    dropCaches();
    long start = System.nanoTime();
    Csi.Snapshot snapshot =
        csi.controller()
            .createSnapshot(Requests.createSnapshot("plain-snap", volume.getVolumeId()))
            .getSnapshot();
    double driverSeconds = (System.nanoTime() - start) / 1e9;
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshot.getSnapshotId()));

    Path image = poolDir.resolve("images/" + volume.getVolumeId() + ".img");
    Path copy = poolDir.resolve("cp-copy.img");
    dropCaches();
    start = System.nanoTime();
    Process cp =
        new ProcessBuilder("cp", "--sparse=always", image.toString(), copy.toString())
            .inheritIO()
            .start();
    if (!cp.waitFor(300, TimeUnit.SECONDS) || cp.exitValue() != 0) {
      throw new IllegalStateException("cp failed");
    }
    double cpSeconds = (System.nanoTime() - start) / 1e9;
    try (FileChannel channel = FileChannel.open(copy, StandardOpenOption.WRITE)) {
      channel.force(true); // the driver syncs its copy before answering; time cp with it too
    }
    double cpSyncSeconds = (System.nanoTime() - start) / 1e9;
    Files.delete(copy);
    double mb = bytes / 1e6;
    print("plain_copy_driver_mb_s", mb / driverSeconds);
    print("plain_copy_cp_sparse_mb_s", mb / cpSeconds);
    print("plain_copy_cp_sparse_fsync_mb_s", mb / cpSyncSeconds);
    takeDown(volume, "plain");
  }

  private Csi.Volume create(String name, long bytes, String pool, Csi.VolumeCapability capability) {
    return csi.controller()
        .createVolume(inPool(Requests.createVolume(name, bytes, capability), pool))
        .getVolume();
  }

  /** The request with the StorageClass parameter that names the pool, unless pool is "". */
  private static Csi.CreateVolumeRequest inPool(Csi.CreateVolumeRequest request, String pool) {
    return pool.isEmpty() ? request : request.toBuilder().putParameters("pool", pool).build();
  }

  private Path publish(Csi.Volume volume, String name, Csi.VolumeCapability capability)
      throws IOException {
    String staging = Files.createDirectories(mountDir.resolve(name + "-staging")).toString();
    String target = mountDir.resolve(name).toString();
    csi.node().nodeStageVolume(Requests.stage(volume, staging, capability));
    csi.node().nodePublishVolume(Requests.publish(volume, staging, target, capability));
    return Path.of(target, "data.bin");
  }

  private void takeDown(Csi.Volume volume, String name) {
    csi.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), mountDir + "/" + name));
    csi.node()
        .nodeUnstageVolume(
            Requests.unstage(volume.getVolumeId(), mountDir + "/" + name + "-staging"));
    csi.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
  }

  /** Appends incompressible data and fsyncs it, so copies move real, written blocks. */
  private static long append(Path file, long bytes) throws IOException {
    byte[] chunk = new byte[(int) (4 * MIB)];
    Random random = new Random(bytes);
    try (OutputStream out =
        Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      for (long done = 0; done < bytes; done += chunk.length) {
        random.nextBytes(chunk);
        out.write(chunk);
      }
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
    return bytes;
  }

  private static void dropCaches() throws IOException {
    Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
  }

  private static void print(String metric, double value) {
    System.out.printf("%s\t%.1f%n", metric, value);
  }
}

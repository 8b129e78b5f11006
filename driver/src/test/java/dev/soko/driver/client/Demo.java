package dev.soko.driver.client;

import csi.v1.Csi;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.Callable;

/**
 * The driver demo: walks one volume through its whole life against a running driver and prints each
 * step with its duration. Usage: {@code Demo ENDPOINT WORKDIR} where WORKDIR is an allowed path
 * root of the driver (staging and target paths are made under it).
 */
public final class Demo {
  private static final long MIB = 1024 * 1024;
  // XFS: it grows online with CAP_SYS_ADMIN alone (ext4's online resize also needs
  // CAP_SYS_RESOURCE, which some sandboxes withhold; the driver then grows ext4 at the next stage).
  private static final Csi.VolumeCapability XFS = Requests.mount("xfs");

  private final CsiClient csi;
  private final Path work;
  private int step;

  private Demo(CsiClient csi, Path work) {
    this.csi = csi;
    this.work = work;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: Demo unix:///path/csi.sock WORKDIR");
      System.exit(2);
    }
    Path socket = CsiClient.socketPath(args[0]);
    try (CsiClient csi = new CsiClient(socket)) {
      new Demo(csi, Path.of(args[1])).run();
    }
  }

  private void run() throws Exception {
    Csi.Volume data =
        step(
            "CreateVolume demo-data (320 MiB, xfs)",
            () ->
                csi.controller()
                    .createVolume(Requests.createVolume("demo-data", 320 * MIB, XFS))
                    .getVolume());
    String staging = dir("staging/demo-data");
    String target = dir("target/demo-data");
    step(
        "NodeStageVolume (loop device, mkfs, mount)",
        () -> csi.node().nodeStageVolume(Requests.stage(data, staging, XFS)));
    step(
        "NodePublishVolume (bind mount)",
        () -> csi.node().nodePublishVolume(Requests.publish(data, staging, target, XFS)));
    String written =
        step(
            "write 16 MiB of data and fsync",
            () -> writeRandom(Path.of(target, "payload.bin"), 16 * MIB));
    Csi.Snapshot snapshot =
        step(
            "CreateSnapshot demo-snap",
            () ->
                csi.controller()
                    .createSnapshot(Requests.createSnapshot("demo-snap", data.getVolumeId()))
                    .getSnapshot());
    Csi.Volume restored =
        step(
            "CreateVolume demo-restored from the snapshot",
            () ->
                csi.controller()
                    .createVolume(
                        Requests.restoreVolume(
                            "demo-restored", 320 * MIB, XFS, snapshot.getSnapshotId()))
                    .getVolume());
    String restoredStaging = dir("staging/demo-restored");
    String restoredTarget = dir("target/demo-restored");
    step(
        "stage + publish the restored volume",
        () -> {
          csi.node().nodeStageVolume(Requests.stage(restored, restoredStaging, XFS));
          return csi.node()
              .nodePublishVolume(Requests.publish(restored, restoredStaging, restoredTarget, XFS));
        });
    String read =
        step(
            "verify the restored data (sha256)",
            () -> sha256(Path.of(restoredTarget, "payload.bin")));
    if (!read.equals(written)) {
      throw new IllegalStateException("restored data differs: wrote " + written + ", read " + read);
    }
    long before = usage(data.getVolumeId(), target).getTotal();
    step(
        "ControllerExpandVolume demo-data to 640 MiB",
        () ->
            csi.controller()
                .controllerExpandVolume(
                    Csi.ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(data.getVolumeId())
                        .setCapacityRange(
                            Csi.CapacityRange.newBuilder().setRequiredBytes(640 * MIB))
                        .setVolumeCapability(XFS)
                        .build()));
    step(
        "NodeExpandVolume online (loop device + xfs_growfs)",
        () ->
            csi.node()
                .nodeExpandVolume(
                    Csi.NodeExpandVolumeRequest.newBuilder()
                        .setVolumeId(data.getVolumeId())
                        .setVolumePath(target)
                        .setStagingTargetPath(staging)
                        .setCapacityRange(
                            Csi.CapacityRange.newBuilder().setRequiredBytes(640 * MIB))
                        .setVolumeCapability(XFS)
                        .build()));
    long after = usage(data.getVolumeId(), target).getTotal();
    System.out.printf("        filesystem size: %d MiB -> %d MiB%n", before / MIB, after / MIB);
    if (after <= before) {
      throw new IllegalStateException("the filesystem did not grow");
    }
    step(
        "clean up: unpublish, unstage, delete volumes and snapshot",
        () -> {
          for (String[] v :
              new String[][] {
                {data.getVolumeId(), staging, target},
                {restored.getVolumeId(), restoredStaging, restoredTarget}
              }) {
            csi.node().nodeUnpublishVolume(Requests.unpublish(v[0], v[2]));
            csi.node().nodeUnstageVolume(Requests.unstage(v[0], v[1]));
            csi.controller().deleteVolume(Requests.deleteVolume(v[0]));
          }
          return csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshot.getSnapshotId()));
        });
    int left =
        csi.controller().listVolumes(Csi.ListVolumesRequest.getDefaultInstance()).getEntriesCount();
    System.out.printf("done: %d volumes left on the pool%n", left);
    if (left != 0) {
      throw new IllegalStateException(left + " volumes were left behind");
    }
  }

  private Csi.VolumeUsage usage(String volumeId, String path) {
    return csi
        .node()
        .nodeGetVolumeStats(
            Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(volumeId)
                .setVolumePath(path)
                .build())
        .getUsageList()
        .stream()
        .filter(u -> u.getUnit() == Csi.VolumeUsage.Unit.BYTES)
        .findFirst()
        .orElseThrow();
  }

  private <T> T step(String what, Callable<T> action) throws Exception {
    long start = System.nanoTime();
    T result = action.call();
    double ms = (System.nanoTime() - start) / 1e6;
    System.out.printf("[%2d] %-55s %8.1f ms%n", ++step, what, ms);
    return result;
  }

  private String dir(String relative) throws IOException {
    Path path = work.resolve(relative);
    Files.createDirectories(path.getParent());
    return path.toString();
  }

  private static String writeRandom(Path file, long bytes)
      throws IOException, NoSuchAlgorithmException {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    byte[] chunk = new byte[(int) MIB];
    Random random = new Random(42);
    try (OutputStream out = Files.newOutputStream(file)) {
      for (long done = 0; done < bytes; done += chunk.length) {
        random.nextBytes(chunk);
        digest.update(chunk);
        out.write(chunk);
      }
    }
    try (var channel =
        java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
      channel.force(true);
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private static String sha256(Path file) throws IOException, NoSuchAlgorithmException {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    digest.update(Files.readAllBytes(file));
    return HexFormat.of().formatHex(digest.digest());
  }
}

package dev.soko.driver.bench;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Brings up the volumes hack/bench-data.sh runs fio on, through a running driver's socket as a
 * kubelet would: CreateVolume, NodeStageVolume, NodePublishVolume for an ext4, an xfs and a block
 * volume; and takes them down again (unpublish, unstage, delete). fio runs as its own process
 * between the two calls, so the volumes outlive this JVM.
 *
 * <p>Usage: {@code DataVolumes up SOCKET MOUNTDIR STATE BYTES} prints {@code NAME TARGET} per
 * volume and keeps what {@code down} needs in STATE; {@code DataVolumes down SOCKET STATE}.
 */
public final class DataVolumes {
  private DataVolumes() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3 || !(args[0].equals("up") ? args.length == 5 : args[0].equals("down"))) {
      System.err.println(
          "usage: DataVolumes up SOCKET MOUNTDIR STATE BYTES | DataVolumes down SOCKET STATE");
      System.exit(2);
    }
    Path socket = Path.of(args[1]);
    try (CsiClient csi = new CsiClient(socket)) {
      if (args[0].equals("up")) {
        up(csi, Path.of(args[2]), Path.of(args[3]), Long.parseLong(args[4]));
      } else {
        down(csi, Path.of(args[2]));
      }
    }
  }

  private static void up(CsiClient csi, Path mountDir, Path state, long bytes) throws Exception {
    List<String> lines = new ArrayList<>();
    for (String kind : List.of("ext4", "xfs", "block")) {
      Csi.VolumeCapability capability =
          kind.equals("block") ? Requests.block() : Requests.mount(kind);
      Csi.Volume volume =
          csi.controller()
              .createVolume(Requests.createVolume("data-" + kind, bytes, capability))
              .getVolume();
      String staging = Files.createDirectories(mountDir.resolve(kind + "-staging")).toString();
      String target = mountDir.resolve(kind).toString();
      csi.node().nodeStageVolume(Requests.stage(volume, staging, capability));
      csi.node().nodePublishVolume(Requests.publish(volume, staging, target, capability));
      lines.add(String.join(" ", kind, volume.getVolumeId(), staging, target));
      System.out.println(kind + " " + target);
    }
    Files.write(state, lines);
  }

  private static void down(CsiClient csi, Path state) throws Exception {
    for (String line : Files.readAllLines(state)) {
      String[] f = line.split(" ");
      csi.node().nodeUnpublishVolume(Requests.unpublish(f[1], f[3]));
      csi.node().nodeUnstageVolume(Requests.unstage(f[1], f[2]));
      deleteOnceDetached(csi, f[1]);
    }
  }

  /**
   * The kernel frees a loop device on its last close, and udev may still hold it open to probe it
   * on a loaded host for longer than the driver waits at unstage; DeleteVolume refuses while the
   * device is attached (FAILED_PRECONDITION), so it is asked again for a while.
   */
  private static void deleteOnceDetached(CsiClient csi, String volumeId) throws Exception {
    for (int attempt = 0; ; attempt++) {
      try {
        csi.controller().deleteVolume(Requests.deleteVolume(volumeId));
        return;
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.FAILED_PRECONDITION || attempt == 30) {
          throw e;
        }
        Thread.sleep(1000);
      }
    }
  }
}

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
 * kubelet would: CreateVolume, NodeStageVolume, NodePublishVolume for each volume asked for (an
 * ext4, an xfs, a btrfs or a block volume, in the driver's default pool or a named one); and takes
 * them down again (unpublish, unstage, delete). fio runs as its own process between the two calls,
 * so the volumes outlive this JVM.
 *
 * <p>Usage: {@code DataVolumes up SOCKET MOUNTDIR STATE BYTES KIND[@POOL]...} with KIND one of
 * ext4, xfs, btrfs, block prints {@code KIND TARGET} per volume and keeps what {@code down} needs
 * in STATE; {@code DataVolumes down SOCKET STATE}.
 */
public final class DataVolumes {
  private DataVolumes() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3 || !(args[0].equals("up") ? args.length > 5 : args[0].equals("down"))) {
      System.err.println(
          "usage: DataVolumes up SOCKET MOUNTDIR STATE BYTES KIND[@POOL]..."
              + " | DataVolumes down SOCKET STATE");
      System.exit(2);
    }
    Path socket = Path.of(args[1]);
    try (CsiClient csi = new CsiClient(socket)) {
      if (args[0].equals("up")) {
        List<String> kinds = List.of(args).subList(5, args.length);
        up(csi, Path.of(args[2]), Path.of(args[3]), Long.parseLong(args[4]), kinds);
      } else {
        down(csi, Path.of(args[2]));
      }
    }
  }

  private static void up(CsiClient csi, Path mountDir, Path state, long bytes, List<String> kinds)
      throws Exception {
    List<String> lines = new ArrayList<>();
    for (String kindAndPool : kinds) {
      int at = kindAndPool.indexOf('@');
      String kind = at < 0 ? kindAndPool : kindAndPool.substring(0, at);
      Csi.VolumeCapability capability =
          kind.equals("block") ? Requests.block() : Requests.mount(kind);
      Csi.CreateVolumeRequest request = Requests.createVolume("data-" + kind, bytes, capability);
      if (at >= 0) {
        request = request.toBuilder().putParameters("pool", kindAndPool.substring(at + 1)).build();
      }
      Csi.Volume volume = csi.controller().createVolume(request).getVolume();
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

package dev.soko.driver.client;

import csi.v1.Csi;
import java.nio.file.Path;

/**
 * Creates a few filesystem volumes on a running driver and prints their IDs, so a test outside this
 * module (the operator's PrometheusMonitoringIT) has volumes and CSI calls to see in the metrics
 * without a gRPC client of its own. Usage: {@code CreateVolumes ENDPOINT NAME BYTES [NAME
 * BYTES...]} with the driver jar and this module's test classes on the class path.
 */
public final class CreateVolumes {
  private CreateVolumes() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3 || args.length % 2 == 0) {
      System.err.println("usage: CreateVolumes unix:///path/csi.sock NAME BYTES [NAME BYTES...]");
      System.exit(2);
    }
    Path socket = CsiClient.socketPath(args[0]);
    try (CsiClient csi = new CsiClient(socket)) {
      for (int i = 1; i < args.length; i += 2) {
        Csi.CreateVolumeResponse created =
            csi.controller()
                .createVolume(
                    Requests.createVolume(
                        args[i], Long.parseLong(args[i + 1]), Requests.mount("")));
        System.out.println(created.getVolume().getVolumeId());
      }
    }
  }
}

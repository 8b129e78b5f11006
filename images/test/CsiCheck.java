import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A tiny CSI client for the image test (hack/test-images.sh), run as a single-file program with the
 * driver's shaded jar as class path, so it uses the same generated classes and gRPC as the driver.
 *
 * <p>Usage: {@code java -cp soko-driver.jar CsiCheck.java <socket> <timeout-seconds> probe|create
 * [k=v ...]}. Waits until Probe answers ready; with {@code create} it then creates a 64 MiB ext4
 * volume (StorageClass parameters from k=v), checks the answer and deletes it. Prints one line per
 * step; exits non-zero on any failure with the gRPC status, so the calling script fails loudly.
 */
public final class CsiCheck {
  private static final long VOLUME_BYTES = 64L << 20;

  public static void main(String[] args) throws Exception {
    if (args.length < 3 || !List.of("probe", "create").contains(args[2])) {
      System.err.println("usage: CsiCheck <socket path> <timeout seconds> probe|create [k=v ...]");
      System.exit(2);
    }
    Map<String, String> params = new LinkedHashMap<>();
    for (int i = 3; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      params.put(kv[0], kv.length > 1 ? kv[1] : "");
    }
    ManagedChannel channel =
        Grpc.newChannelBuilder("unix:" + args[0], InsecureChannelCredentials.create()).build();
    try {
      waitReady(IdentityGrpc.newBlockingStub(channel), Long.parseLong(args[1]));
      if (args[2].equals("create")) {
        createAndDelete(ControllerGrpc.newBlockingStub(channel), params);
      }
    } catch (StatusRuntimeException e) {
      System.err.println("FAIL: " + e.getStatus());
      System.exit(1);
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static void waitReady(IdentityGrpc.IdentityBlockingStub identity, long timeoutSeconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    StatusRuntimeException last = null;
    while (System.nanoTime() < deadline) {
      try {
        Csi.ProbeResponse probe =
            identity
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .probe(Csi.ProbeRequest.getDefaultInstance());
        if (!probe.hasReady() || probe.getReady().getValue()) {
          Csi.GetPluginInfoResponse info =
              identity.getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
          System.out.println(
              "probe: ready; plugin " + info.getName() + " " + info.getVendorVersion());
          return;
        }
      } catch (StatusRuntimeException e) {
        last = e; // the socket may not exist yet while the JVM starts
      }
      Thread.sleep(500);
    }
    System.err.println(
        "FAIL: driver not ready after " + timeoutSeconds + "s: " + (last == null ? "" : last));
    System.exit(1);
  }

  private static void createAndDelete(
      ControllerGrpc.ControllerBlockingStub controller, Map<String, String> params) {
    Csi.VolumeCapability capability =
        Csi.VolumeCapability.newBuilder()
            .setMount(Csi.VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
            .setAccessMode(
                Csi.VolumeCapability.AccessMode.newBuilder()
                    .setMode(Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
            .build();
    Csi.CreateVolumeResponse created =
        controller
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .createVolume(
                Csi.CreateVolumeRequest.newBuilder()
                    .setName("image-test-volume")
                    .setCapacityRange(
                        Csi.CapacityRange.newBuilder().setRequiredBytes(VOLUME_BYTES))
                    .addVolumeCapabilities(capability)
                    .putAllParameters(params)
                    .build());
    Csi.Volume volume = created.getVolume();
    if (volume.getVolumeId().isEmpty() || volume.getCapacityBytes() < VOLUME_BYTES) {
      System.err.println("FAIL: bad CreateVolume answer: " + volume);
      System.exit(1);
    }
    System.out.println(
        "create: " + volume.getVolumeId() + " " + volume.getCapacityBytes() + " bytes");
    controller
        .withDeadlineAfter(60, TimeUnit.SECONDS)
        .deleteVolume(
            Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
    System.out.println("delete: ok");
  }
}

package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.Int64Value;
import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pool refusal through the real jar on real mounts. The temp directory plays the node's root
 * filesystem: the kubelet's plugins directory is there, and so is one pool (refused). A
 * loop-mounted XFS is a disk of its own (accepted, also with requireMountPoint); a subdirectory of
 * it is not the root of a filesystem (refused with requireMountPoint). Needs root and fails without
 * it.
 */
class PoolPlacementIT {
  private static final long MIB = 1024 * 1024;

  private Path root;
  private Path xfs;
  private DriverJar driver;

  @BeforeEach
  void start() throws Exception {
    root = Files.createTempDirectory("soko-pools-");
    Files.createDirectories(root.resolve("kubelet/plugins"));
    Files.createDirectories(root.resolve("rootfs-pool"));
    xfs = Files.createDirectories(root.resolve("xfs"));
    Path image = root.resolve("xfs.img");
    try (var file = new java.io.RandomAccessFile(image.toFile(), "rw")) {
      file.setLength(512 * MIB);
    }
    run("mkfs.xfs", "-q", image.toString());
    run("mount", "-o", "loop", image.toString(), xfs.toString());
    Files.createDirectories(xfs.resolve("sub"));
    // What a container sees of a hostPath that is a subdirectory of a disk: a bind mount of it.
    Path bound = Files.createDirectories(root.resolve("bound"));
    run(
        "mount",
        "--bind",
        Files.createDirectories(xfs.resolve("sub2")).toString(),
        bound.toString());
    driver = new DriverJar(root);
  }

  @AfterEach
  void stop() throws Exception {
    driver.close();
    HostState.release(root);
  }

  @Test
  void refusedPoolsOfferNothingTakeNoVolumesAndStayEmptyWhileADiskOfItsOwnServes()
      throws Exception {
    CsiClient csi =
        driver.startWithPools(
            List.of(
                "name=rootfs,path=" + root.resolve("rootfs-pool"),
                "name=disk,path=" + xfs + ",requireMountPoint=true",
                "name=sub,path=" + xfs.resolve("sub") + ",requireMountPoint=true",
                "name=bound,path=" + root.resolve("bound") + ",requireMountPoint=true"),
            List.of("--kubelet-dir", root.resolve("kubelet").toString()));

    assertThat(csi.identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue())
        .as("refused pools do not make the driver unready")
        .isTrue();
    assertThat(capacity(csi, "rootfs")).isZero();
    assertThat(capacity(csi, "sub")).isZero();
    assertThat(capacity(csi, "bound")).isZero();
    assertThat(capacity(csi, "disk")).isGreaterThan(400 * MIB);

    assertRefused(csi, "rootfs", "root filesystem");
    assertRefused(csi, "sub", "is not a mount point");
    assertRefused(csi, "bound", "the subdirectory /sub2 of the filesystem on /dev/loop");
    Csi.Volume volume = csi.controller().createVolume(inPool("ok", "disk")).getVolume();
    assertThat(volume.getCapacityBytes()).isEqualTo(16 * MIB);
    try (Stream<Path> files = Files.list(root.resolve("rootfs-pool"))) {
      assertThat(files).as("nothing is written into a refused pool").isEmpty();
    }
    for (String dir : List.of("sub", "sub2")) {
      try (Stream<Path> files = Files.list(xfs.resolve(dir))) {
        assertThat(files).isEmpty();
      }
    }
    assertThat(driver.log()).contains("pool rootfs refused").contains("pool sub refused");
    csi.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
  }

  private static Csi.CreateVolumeRequest inPool(String name, String pool) {
    return Requests.createVolume(name, 16 * MIB, Requests.mount("ext4")).toBuilder()
        .putParameters("pool", pool)
        .build();
  }

  private static void assertRefused(CsiClient csi, String pool, String reason) {
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () -> csi.controller().createVolume(inPool("v-" + pool, pool)));
    assertThat(e.getStatus().getCode())
        .as("%s", e.getStatus().getDescription())
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.getStatus().getDescription())
        .contains("pool " + pool + " takes no volumes on this node")
        .contains(reason);
  }

  private static long capacity(CsiClient csi, String pool) {
    Csi.GetCapacityResponse response =
        csi.controller()
            .getCapacity(Csi.GetCapacityRequest.newBuilder().putParameters("pool", pool).build());
    Int64Value max = response.getMaximumVolumeSize();
    assertThat(max.getValue()).isLessThanOrEqualTo(response.getAvailableCapacity());
    return response.getAvailableCapacity();
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).inheritIO().start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s", List.of(command)).isZero();
  }
}

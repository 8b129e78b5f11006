package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The node driver's container killed and started again, as on a Kubernetes node. The old driver
 * runs in a mount namespace of its own with the pool bind-mounted into it, and mounts volumes into
 * the kubelet's directory, which is shared with the host both ways (what {@code mountPropagation:
 * Bidirectional} does). Its namespace ends with it, and the kernel then names the loop device's
 * backing file relative to a mount no one can reach ({@code /images/vol-....img}). The next driver
 * must still know that device as the volume's. Needs root and fails without it.
 */
class ContainerRestartIT {
  private static final long MIB = 1024 * 1024;
  private static final Csi.VolumeCapability EXT4 = Requests.mount("ext4");

  private Path root;
  private Path containerPool;
  private Path image;
  private DriverJar driver;

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createTempDirectory("soko-restart-");
    driver = new DriverJar(root);
    // Where the container sees the pool: a private mount, so the pool's bind mount made on it in
    // the container's namespace stays there and goes with it.
    containerPool = Files.createDirectories(root.resolve("container-pool"));
    HostState.check("mount", "--bind", containerPool.toString(), containerPool.toString());
    HostState.check("mount", "--make-private", containerPool.toString());
    // The kubelet's directory, shared: mounts made in the container's namespace reach the host.
    HostState.check("mount", "--bind", driver.mounts.toString(), driver.mounts.toString());
    HostState.check("mount", "--make-shared", driver.mounts.toString());
  }

  @AfterEach
  void tearDown() throws Exception {
    driver.close();
    // Found by identity before the image goes: the path the kernel shows is not under root.
    List<String> left = image == null ? List.of() : HostState.loopDevicesHolding(image);
    HostState.release(root);
    for (String device : left) {
      HostState.check("losetup", "--detach", device);
    }
  }

  /** Runs the driver as a container runtime would: its own mount namespace, the pool bound in. */
  private List<String> inItsOwnContainer() {
    return List.of(
        "unshare",
        "--mount",
        "--propagation",
        "unchanged",
        "sh",
        "-ec",
        "mount --bind \"$1\" \"$2\"; shift 2; exec \"$@\"",
        "sh",
        driver.pool.toString(),
        containerPool.toString());
  }

  @Test
  void aDriverStartedAfterItsContainerWasKilledUnpublishesUnstagesAndDeletes() throws Exception {
    CsiClient old = driver.start(inItsOwnContainer(), containerPool);
    Csi.Volume volume =
        old.controller().createVolume(Requests.createVolume("restart", 16 * MIB, EXT4)).getVolume();
    String id = volume.getVolumeId();
    image = driver.pool.resolve("images/" + id + ".img");
    String staging = driver.mounts.resolve("staging/" + id).toString();
    Path target = driver.mounts.resolve("pods/p1/volumes/" + id + "/mount");
    old.node().nodeStageVolume(Requests.stage(volume, staging, EXT4));
    old.node().nodePublishVolume(Requests.publish(volume, staging, target.toString(), EXT4));
    Files.writeString(target.resolve("data"), "the host sees the container's mounts");
    List<String> devices = HostState.loopDevicesHolding(image);
    assertThat(devices).hasSize(1);

    driver.kill();
    Path backingFile =
        Path.of(
            "/sys/block", Path.of(devices.get(0)).getFileName().toString(), "loop/backing_file");
    assertThat(Files.readString(backingFile).strip())
        .as("the kernel names the image relative to the container's vanished pool mount")
        .isEqualTo("/images/" + id + ".img");
    assertThat(HostState.mountsUnder(driver.mounts)).contains(staging, target.toString());

    CsiClient csi = driver.start();
    csi.node().nodeUnpublishVolume(Requests.unpublish(id, target.toString()));
    csi.node().nodeUnstageVolume(Requests.unstage(id, staging));
    assertThat(HostState.mountsUnder(driver.mounts))
        .as("only the kubelet directory itself")
        .containsExactly(driver.mounts.toString());
    assertThat(HostState.loopDevicesHolding(image)).as("loop devices left").isEmpty();
    csi.controller().deleteVolume(Requests.deleteVolume(id));
    assertThat(image).doesNotExist();
  }
}

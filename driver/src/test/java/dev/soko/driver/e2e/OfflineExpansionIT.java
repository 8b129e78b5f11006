package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import dev.soko.driver.testing.Caps;
import dev.soko.driver.testing.OnlineExt4Growth;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Growing an ext4 volume through the real jars in the order the kubelet and the external resizer
 * use: the resizer's ControllerExpandVolume goes to the controller Deployment (which cannot see the
 * pool), and the kubelet calls NodeExpandVolume right after the next NodeStageVolume, before any
 * NodePublishVolume. Growing a mounted ext4 needs CAP_SYS_RESOURCE, which root in some sandboxes
 * and hardened nodes lacks; a staged but unpublished volume must grow offline there, and the pod
 * must see the new size. Needs root and real loop devices.
 */
class OfflineExpansionIT {
  private static final long MIB = 1024 * 1024;
  private static final long SIZE = 64 * MIB;
  private static final long GROWN = 256 * MIB;

  /** Stage flags that must survive the staging mount being taken down and put back. */
  private static final Csi.VolumeCapability EXT4 = Caps.mount("ext4", "noatime", "nodev");

  private Path root;
  private DriverJar driver;
  private CsiClient node;
  private ControllerJar controller;
  private String staging;
  private Path target;

  @BeforeEach
  void start() throws Exception {
    root = Files.createTempDirectory("soko-offline-");
    driver = new DriverJar(root);
    node = driver.start();
    controller = ControllerJar.start(root);
    staging = driver.mounts.resolve("staging/pv").toString();
    target = driver.mounts.resolve("pods/p/volumes/pv/mount");
  }

  @AfterEach
  void stop() throws Exception {
    controller.close();
    driver.close();
    HostState.release(root);
  }

  @Test
  void anExt4VolumeGrownWhileNoPodUsesItShowsItsNewSizeToTheNextPod() throws Exception {
    Csi.Volume volume =
        node.controller().createVolume(Requests.createVolume("offline", SIZE, EXT4)).getVolume();
    node.node().nodeStageVolume(Requests.stage(volume, staging, EXT4));
    node.node().nodePublishVolume(Requests.publish(volume, staging, target.toString(), EXT4));
    Files.writeString(target.resolve("keep"), "written before the growth");
    long before = Files.getFileStore(target).getTotalSpace();
    assertThat(before).isLessThan(SIZE);
    node.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target.toString()));
    node.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));

    Csi.ControllerExpandVolumeResponse expanded =
        controller
            .csi()
            .controller()
            .controllerExpandVolume(
                Csi.ControllerExpandVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId())
                    .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(GROWN))
                    .build());
    assertThat(expanded.getNodeExpansionRequired()).isTrue();

    node.node().nodeStageVolume(Requests.stage(volume, staging, EXT4));
    long grown = node.node().nodeExpandVolume(expansion(volume)).getCapacityBytes();
    assertThat(grown).isEqualTo(GROWN);
    node.node().nodePublishVolume(Requests.publish(volume, staging, target.toString(), EXT4));

    long after = Files.getFileStore(target).getTotalSpace();
    assertThat(after - before).as("statfs of the published path").isGreaterThan(150 * MIB);
    assertThat(Files.readString(target.resolve("keep"))).isEqualTo("written before the growth");
    assertThat(stagingMountOptions()).as("mounted again with its stage flags").contains("nodev");
    assertThat(stagingMountOptions()).contains("noatime");
    // Also on a host whose root may grow ext4 online: unpublished, the volume takes the offline
    // path, so this test cannot pass by way of an online resize.
    assertThat(driver.log()).contains("grown offline").doesNotContain("grown online");

    node.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target.toString()));
    node.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    node.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
    assertThat(HostState.mountsUnder(root)).isEmpty();
    assertThat(HostState.loopDevicesUnder(root)).isEmpty();
  }

  @Test
  void aPublishedExt4VolumeGrowsOnline() throws Exception {
    assumeTrue(OnlineExt4Growth.permitted(), OnlineExt4Growth.WITHHELD);
    Csi.Volume volume = publishedAndGrownByTheController("online");
    long before = Files.getFileStore(target).getTotalSpace();

    node.node().nodeExpandVolume(expansion(volume));

    assertThat(driver.log()).contains("grown online");
    assertThat(Files.getFileStore(target).getTotalSpace() - before).isGreaterThan(150 * MIB);
    teardown(volume);
  }

  @Test
  void withoutCapSysResourceAPublishedExt4SaysWhyAndGrowsWhenNextStaged() throws Exception {
    assumeFalse(OnlineExt4Growth.permitted(), OnlineExt4Growth.PERMITTED);
    Csi.Volume volume = publishedAndGrownByTheController("refused");
    long before = Files.getFileStore(target).getTotalSpace();

    StatusRuntimeException refused =
        catchThrowableOfType(
            StatusRuntimeException.class, () -> node.node().nodeExpandVolume(expansion(volume)));
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(refused.getStatus().getDescription())
        .contains("CAP_SYS_RESOURCE")
        .contains("published at " + target)
        .contains("next staged while unpublished");
    assertThat(Files.getFileStore(target).getTotalSpace()).isEqualTo(before);
    // The pod goes away and comes back: the kubelet's order, which grows the volume offline.
    node.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target.toString()));
    node.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    node.node().nodeStageVolume(Requests.stage(volume, staging, EXT4));
    assertThat(node.node().nodeExpandVolume(expansion(volume)).getCapacityBytes()).isEqualTo(GROWN);
    node.node().nodePublishVolume(Requests.publish(volume, staging, target.toString(), EXT4));
    assertThat(driver.log()).contains("grown offline").doesNotContain("grown online");
    assertThat(Files.getFileStore(target).getTotalSpace() - before).isGreaterThan(150 * MIB);
    teardown(volume);
  }

  /** An ext4 volume staged and published, whose storage the controller has grown. */
  private Csi.Volume publishedAndGrownByTheController(String name) {
    Csi.Volume volume =
        node.controller().createVolume(Requests.createVolume(name, SIZE, EXT4)).getVolume();
    node.node().nodeStageVolume(Requests.stage(volume, staging, EXT4));
    node.node().nodePublishVolume(Requests.publish(volume, staging, target.toString(), EXT4));
    controller
        .csi()
        .controller()
        .controllerExpandVolume(
            Csi.ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(GROWN))
                .build());
    return volume;
  }

  private void teardown(Csi.Volume volume) {
    node.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target.toString()));
    node.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    node.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
  }

  @Test
  void aFilesystemStillMountedInAnotherMountNamespaceIsNotGrownOffline() throws Exception {
    Csi.Volume volume =
        node.controller().createVolume(Requests.createVolume("held", SIZE, EXT4)).getVolume();
    node.node().nodeStageVolume(Requests.stage(volume, staging, EXT4));
    // A copy of the mount table that the driver cannot see, as a container's leaked mount is.
    Process holder =
        new ProcessBuilder("unshare", "--mount", "--propagation", "private", "sleep", "300")
            .start();
    try {
      Path holderMounts = Path.of("/proc", Long.toString(holder.pid()), "mountinfo");
      for (int i = 0;
          i < 100 && !Files.readString(holderMounts).contains(" " + staging + " ");
          i++) {
        Thread.sleep(50);
      }
      assertThat(Files.readString(holderMounts)).contains(" " + staging + " ");

      StatusRuntimeException refused =
          catchThrowableOfType(
              StatusRuntimeException.class, () -> node.node().nodeExpandVolume(expansion(volume)));

      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
      assertThat(refused.getStatus().getDescription())
          .contains("cannot grow volume " + volume.getVolumeId() + " offline")
          .contains("in use")
          .contains("it is mounted again at " + staging);
      assertThat(stagingMountOptions()).contains("nodev", "noatime");
    } finally {
      holder.destroyForcibly().waitFor();
    }
    // Once nothing else holds it, the kubelet's retry grows it.
    assertThat(node.node().nodeExpandVolume(expansion(volume)).getCapacityBytes()).isEqualTo(GROWN);
    node.node().nodePublishVolume(Requests.publish(volume, staging, target.toString(), EXT4));
    assertThat(Files.getFileStore(target).getTotalSpace()).isGreaterThan(200 * MIB);

    node.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target.toString()));
    node.node().nodeUnstageVolume(Requests.unstage(volume.getVolumeId(), staging));
    node.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
  }

  /** What the kubelet sends: the pod's (not yet mounted) volume path and the staging path. */
  private Csi.NodeExpandVolumeRequest expansion(Csi.Volume volume) {
    return Csi.NodeExpandVolumeRequest.newBuilder()
        .setVolumeId(volume.getVolumeId())
        .setVolumePath(target.toString())
        .setStagingTargetPath(staging)
        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(GROWN))
        .setVolumeCapability(EXT4)
        .build();
  }

  /** The per-mount options of the staging mount, as /proc/self/mountinfo shows them. */
  private List<String> stagingMountOptions() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String[] fields = line.split(" ");
      if (fields[4].equals(staging)) {
        return List.of(fields[5].split(","));
      }
    }
    throw new AssertionError(staging + " is not mounted");
  }
}

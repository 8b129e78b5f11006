package dev.soko.driver.volume;

import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.testing.OnlineExt4Growth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A growth the controller hands to the node ({@link VolumeManager#expandNow}) on real loop devices,
 * filesystems and mounts: the workload sees the new size when the call returns, with nothing left
 * for the kubelet, for a mounted xfs, a block device in use and an ext4 no pod uses (needs root).
 */
class ImmediateGrowthIT {
  @RegisterExtension static final HostFixture host = new HostFixture();

  private static VolumeRequest request(String name, AccessType type, String fsType, long bytes) {
    return new VolumeRequest(name, bytes, 0, "xfs", type, fsType, ContentSource.EMPTY, Map.of());
  }

  private static Path staging(String name) {
    return host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
  }

  private static Path target(String name) {
    return host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/mount");
  }

  private static void stageAndPublish(VolumeManager engine, Volume v) {
    engine.stage(new StageRequest(v.id(), staging(v.name()), v.accessType(), "", List.of()));
    engine.publish(
        new PublishRequest(
            v.id(), staging(v.name()), target(v.name()), false, v.accessType(), List.of()));
  }

  private static void teardown(VolumeManager engine, Volume v) {
    engine.unpublish(v.id(), target(v.name()));
    engine.unstage(v.id(), staging(v.name()));
    engine.deleteVolume(v.id());
  }

  private static long deviceSize(Volume v) throws Exception {
    String device =
        new Losetup().devicesFor(host.xfsPool.resolve("images/" + v.id() + ".img")).get(0);
    return Long.parseLong(host.sh("blockdev", "--getsize64", device).strip());
  }

  @Test
  void aMountedXfsGrowsOnlineAndThePodSeesItWhenTheCallReturns() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume v = engine.createVolume(request("now-xfs", AccessType.FILESYSTEM, "xfs", 300 * MIB));
      stageAndPublish(engine, v);
      Files.writeString(target(v.name()).resolve("keep"), "still here");
      long before = engine.usage(v.id(), target(v.name())).totalBytes();

      assertThat(engine.expandNow(v.id(), 428 * MIB, 0))
          .isEqualTo(new ExpandResult(428 * MIB, false));

      assertThat(engine.usage(v.id(), target(v.name())).totalBytes() - before)
          .isGreaterThan(100 * MIB);
      assertThat(deviceSize(v)).isEqualTo(428 * MIB);
      assertThat(Files.readString(target(v.name()).resolve("keep"))).isEqualTo("still here");
      teardown(engine, v);
    }
  }

  @Test
  void aBlockDeviceInUseGrowsAtOnce() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume v = engine.createVolume(request("now-raw", AccessType.BLOCK, "", 16 * MIB));
      stageAndPublish(engine, v);
      Path device = target(v.name());

      assertThat(engine.expandNow(v.id(), 48 * MIB, 0))
          .isEqualTo(new ExpandResult(48 * MIB, false));

      assertThat(Long.parseLong(host.sh("blockdev", "--getsize64", device.toString()).strip()))
          .isEqualTo(48 * MIB);
      teardown(engine, v);
    }
  }

  @Test
  void anExt4NoPodUsesGrowsAndTheNextPodSeesItWhateverTheNodeMayDo() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume v = engine.createVolume(request("now-ext4", AccessType.FILESYSTEM, "ext4", 32 * MIB));
      stageAndPublish(engine, v);
      Files.writeString(target(v.name()).resolve("keep"), "still here");
      long before = engine.usage(v.id(), target(v.name())).totalBytes();
      engine.unpublish(v.id(), target(v.name()));
      engine.unstage(v.id(), staging(v.name()));

      assertThat(engine.expandNow(v.id(), 160 * MIB, 0))
          .isEqualTo(new ExpandResult(160 * MIB, false));

      // The next pod: staging grows the filesystem unmounted, which needs no capability.
      stageAndPublish(engine, v);
      assertThat(engine.usage(v.id(), target(v.name())).totalBytes() - before)
          .isGreaterThan(100 * MIB);
      assertThat(Files.readString(target(v.name()).resolve("keep"))).isEqualTo("still here");
      teardown(engine, v);
    }
  }

  @Test
  void aMountedExt4GrowsOnlineAtOnceWhereTheKernelAllows() throws Exception {
    assumeTrue(OnlineExt4Growth.permitted(), OnlineExt4Growth.WITHHELD);
    try (LocalVolumeManager engine = host.open()) {
      Volume v =
          engine.createVolume(request("now-ext4-on", AccessType.FILESYSTEM, "ext4", 32 * MIB));
      stageAndPublish(engine, v);
      long before = engine.usage(v.id(), target(v.name())).totalBytes();

      ExpandResult result = engine.expandNow(v.id(), 160 * MIB, 0);

      assertThat(result.capacityBytes()).isEqualTo(160 * MIB);
      assertThat(deviceSize(v)).isEqualTo(160 * MIB);
      assertThat(result.nodeExpansionRequired()).isFalse();
      assertThat(engine.usage(v.id(), target(v.name())).totalBytes() - before)
          .isGreaterThan(100 * MIB);
      teardown(engine, v);
    }
  }

  @Test
  void aMountedExt4TheKernelWillNotGrowIsLeftToTheKubeletsPath() throws Exception {
    assumeFalse(OnlineExt4Growth.permitted(), OnlineExt4Growth.PERMITTED);
    try (LocalVolumeManager engine = host.open()) {
      Volume v =
          engine.createVolume(request("now-ext4-off", AccessType.FILESYSTEM, "ext4", 32 * MIB));
      stageAndPublish(engine, v);
      long before = engine.usage(v.id(), target(v.name())).totalBytes();

      ExpandResult result = engine.expandNow(v.id(), 160 * MIB, 0);

      // The storage and the device grow; the filesystem waits for NodeExpandVolume.
      assertThat(result.capacityBytes()).isEqualTo(160 * MIB);
      assertThat(deviceSize(v)).isEqualTo(160 * MIB);
      assertThat(result.nodeExpansionRequired()).as("the kubelet's path").isTrue();
      assertThat(engine.usage(v.id(), target(v.name())).totalBytes() - before).isZero();
      teardown(engine, v);
    }
  }
}

package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.iolimit.CgroupThrottle;
import dev.soko.driver.iolimit.PodThrottles;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A volume's IO limits through the engine, on a real loop device and this kernel's block IO
 * controller: published to a pod (a pod cgroup with a container's under it, as the kubelet lays
 * them out), modified while published, applied to a container that starts later, kept in the
 * volume's record across a restart of the engine, and refused when malformed. The limits' effect on
 * IO is CgroupThrottleIT's; this checks what the engine writes where. Needs root.
 */
class VolumeIoLimitsIT {
  @RegisterExtension final HostFixture host = new HostFixture();

  final List<Path> cgroups = new ArrayList<>();
  CgroupThrottle throttle;
  String podUid;
  Path pod;

  @BeforeEach
  void pod() throws Exception {
    throttle = CgroupThrottle.detect(Path.of("/sys/fs/cgroup"));
    podUid = UUID.randomUUID().toString();
    Path base = throttle.root().resolve("soko-it-" + UUID.randomUUID());
    pod = base.resolve("besteffort").resolve("pod" + podUid);
    Files.createDirectories(pod.resolve("pause"));
    cgroups.addAll(List.of(pod.resolve("pause"), pod, base.resolve("besteffort"), base));
  }

  @AfterEach
  void removeCgroups() throws Exception {
    for (Path cgroup : cgroups) {
      Files.deleteIfExists(cgroup);
    }
  }

  private Path staging(String name) {
    return host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
  }

  private Path target(String name) {
    return host.kubelet.resolve("pods/" + podUid + "/volumes/" + name + "/mount");
  }

  /** The device rules of one throttle file of {@code cgroup}, e.g. {@code ["7:3 200"]}. */
  private List<String> rules(Path cgroup, String file) throws Exception {
    if (throttle instanceof CgroupThrottle.V2) {
      // io.max: "7:3 rbps=max wbps=4194304 riops=200 wiops=max", on the pod's cgroup only.
      String key =
          Map.of(
                  "read_iops",
                  "riops",
                  "write_iops",
                  "wiops",
                  "read_bps",
                  "rbps",
                  "write_bps",
                  "wbps")
              .get(file);
      List<String> out = new ArrayList<>();
      for (String line : Files.readAllLines(pod.resolve("io.max"))) {
        String[] parts = line.strip().split(" ");
        for (int i = 1; i < parts.length; i++) {
          if (parts[i].startsWith(key + "=") && !parts[i].endsWith("=max")) {
            out.add(parts[0] + " " + parts[i].substring(key.length() + 1));
          }
        }
      }
      return out;
    }
    return Files.readAllLines(cgroup.resolve("blkio.throttle." + file + "_device"));
  }

  @Test
  void aPublishedVolumesLimitsFollowItsModificationsAndItsPodsContainers() throws Exception {
    try (LocalVolumeManager engine = host.open();
        PodThrottles throttles = new PodThrottles(throttle, Duration.ofMillis(200))) {
      engine.limitIo(throttles);
      Volume v =
          engine.createVolume(
              new VolumeRequest(
                  "limited",
                  32L << 20,
                  0,
                  "xfs",
                  AccessType.FILESYSTEM,
                  "ext4",
                  ContentSource.EMPTY,
                  Map.of()));
      engine.stage(
          new StageRequest(v.id(), staging("limited"), AccessType.FILESYSTEM, "", List.of()));
      engine.publish(
          new PublishRequest(
              v.id(),
              staging("limited"),
              target("limited"),
              false,
              AccessType.FILESYSTEM,
              List.of(),
              podUid));
      String device = device();

      engine.modifyVolume(v.id(), Map.of("readIOPS", "200", "writeBytesPerSecond", "4Mi"));
      for (Path cgroup : List.of(pod, pod.resolve("pause"))) {
        assertThat(rules(cgroup, "read_iops")).contains(device + " 200");
        assertThat(rules(cgroup, "write_bps")).contains(device + " 4194304");
      }

      Path app = Files.createDirectories(pod.resolve("app"));
      cgroups.add(0, app);
      Thread.sleep(1000); // five periods
      assertThat(rules(app, "read_iops"))
          .as("a container that started later")
          .contains(device + " 200");

      engine.modifyVolume(v.id(), Map.of("readIOPS", "400"));
      assertThat(rules(app, "read_iops")).contains(device + " 400");
      assertThat(rules(app, "write_bps")).doesNotContain(device + " 4194304");

      assertThatThrownBy(() -> engine.modifyVolume(v.id(), Map.of("readIOPS", "fast")))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.INVALID_ARGUMENT))
          .hasMessageContaining("readIOPS must be a whole number of operations");
      assertThatThrownBy(() -> engine.modifyVolume("vol-unknown", Map.of()))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.NOT_FOUND));

      engine.modifyVolume(v.id(), Map.of());
      assertThat(rules(app, "read_iops")).doesNotContain(device + " 400");

      engine.modifyVolume(v.id(), Map.of("readIOPS", "300"));
      engine.unpublish(v.id(), target("limited"));
    }
    // A restarted driver applies what the record keeps when the volume is published again.
    try (LocalVolumeManager reopened = host.open();
        PodThrottles throttles = new PodThrottles(throttle, Duration.ofMillis(200))) {
      reopened.limitIo(throttles);
      for (Path cgroup : List.of(pod, pod.resolve("pause"), pod.resolve("app"))) {
        Files.writeString(cgroup.resolve("blkio.throttle.read_iops_device"), device() + " 0");
      }
      Volume v = reopened.listVolumes("", 10).items().get(0);
      reopened.publish(
          new PublishRequest(
              v.id(),
              staging("limited"),
              target("limited"),
              false,
              AccessType.FILESYSTEM,
              List.of(),
              podUid));
      assertThat(rules(pod.resolve("app"), "read_iops")).contains(device() + " 300");
      reopened.unpublish(v.id(), target("limited"));
      reopened.unstage(v.id(), staging("limited"));
    }
  }

  @Test
  void aRestartedDriverFindsThePodsItsVolumesArePublishedToAndLimitsThemAgain() throws Exception {
    String id;
    try (LocalVolumeManager engine = host.open();
        PodThrottles throttles = new PodThrottles(throttle, Duration.ofMillis(200))) {
      engine.limitIo(throttles);
      id =
          engine
              .createVolume(
                  new VolumeRequest(
                      "limited",
                      32L << 20,
                      0,
                      "xfs",
                      AccessType.FILESYSTEM,
                      "ext4",
                      ContentSource.EMPTY,
                      Map.of(),
                      Map.of("writeIOPS", "150")))
              .id();
      engine.stage(new StageRequest(id, staging("limited"), AccessType.FILESYSTEM, "", List.of()));
      engine.publish(
          new PublishRequest(
              id,
              staging("limited"),
              target("limited"),
              false,
              AccessType.FILESYSTEM,
              List.of(),
              podUid));
      assertThat(rules(pod.resolve("pause"), "write_iops")).contains(device() + " 150");
    }
    // The driver is down (the volume stays published); a container starts meanwhile, and the
    // limits written before are gone from the pod's cgroups as if they had never been applied.
    Path app = Files.createDirectories(pod.resolve("app"));
    cgroups.add(0, app);
    for (Path cgroup : List.of(pod, pod.resolve("pause"))) {
      Files.writeString(cgroup.resolve("blkio.throttle.write_iops_device"), device() + " 0");
    }
    try (LocalVolumeManager reopened = host.open();
        PodThrottles throttles = new PodThrottles(throttle, Duration.ofMillis(200))) {
      reopened.limitIo(throttles);
      for (Path cgroup : List.of(pod, pod.resolve("pause"), app)) {
        assertThat(rules(cgroup, "write_iops"))
            .as("%s, with no new publish", cgroup.getFileName())
            .contains(device() + " 150");
      }
      reopened.modifyVolume(id, Map.of("writeIOPS", "250"));
      assertThat(rules(app, "write_iops")).contains(device() + " 250");
      reopened.unpublish(id, target("limited"));
      reopened.unstage(id, staging("limited"));
    }
  }

  private String device() throws Exception {
    String loop = host.sh("findmnt", "-n", "-o", "SOURCE", staging("limited").toString()).strip();
    return Files.readString(
            Path.of("/sys/class/block", Path.of(loop).getFileName().toString(), "dev"))
        .strip();
  }
}

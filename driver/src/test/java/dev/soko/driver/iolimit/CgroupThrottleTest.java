package dev.soko.driver.iolimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What each hierarchy is written, on plain directories (the kernel's side is CgroupThrottleIT's).
 */
class CgroupThrottleTest {
  @TempDir Path fs;

  @Test
  void v2WritesOneIoMaxLineOnThePodWithMaxForNoLimit() throws IOException {
    Files.writeString(fs.resolve("cgroup.controllers"), "cpuset cpu io memory pids\n");
    Path pod = Files.createDirectories(fs.resolve("kubepods/burstable/pod1"));

    CgroupThrottle throttle = CgroupThrottle.detect(fs);
    throttle.apply(pod, "7:3", new IoLimits(200, 0, 0, 4 << 20));

    assertThat(throttle).isInstanceOf(CgroupThrottle.V2.class);
    assertThat(Files.readString(pod.resolve("io.max")))
        .isEqualTo("7:3 riops=200 wiops=max rbps=max wbps=4194304");
  }

  @Test
  void v1WritesEveryCgroupOfThePodBecauseItsLimitsAreNotInherited() throws IOException {
    Path blkio = Files.createDirectories(fs.resolve("blkio"));
    Files.writeString(blkio.resolve("blkio.throttle.read_iops_device"), "");
    Path pod = Files.createDirectories(blkio.resolve("kubepods/besteffort/pod1"));
    Path pause = Files.createDirectories(pod.resolve("pause"));
    Path app = Files.createDirectories(pod.resolve("app"));

    CgroupThrottle throttle = CgroupThrottle.detect(fs);
    throttle.apply(pod, "7:3", new IoLimits(200, 100, 0, 0));

    assertThat(throttle).isEqualTo(new CgroupThrottle.V1(blkio));
    for (Path dir : new Path[] {pod, pause, app}) {
      assertThat(Files.readString(dir.resolve("blkio.throttle.read_iops_device")))
          .isEqualTo("7:3 200");
      assertThat(Files.readString(dir.resolve("blkio.throttle.write_iops_device")))
          .isEqualTo("7:3 100");
      assertThat(Files.readString(dir.resolve("blkio.throttle.read_bps_device")))
          .isEqualTo("7:3 0");
    }
  }

  @Test
  void aNodeWithoutABlockIoControllerIsSaidSo() {
    assertThatThrownBy(() -> CgroupThrottle.detect(fs))
        .hasMessageContaining("no block IO controller under " + fs);
  }

  @Test
  void findsAPodUnderEitherCgroupDriver() throws IOException {
    String uid = "7b84098a-ef77-4367-be23-908325f7b78e";
    Path cgroupfs =
        Files.createDirectories(fs.resolve("a/soko-node/kubepods/besteffort/pod" + uid));
    Path systemd =
        Files.createDirectories(
            fs.resolve(
                "b/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                    + uid.replace('-', '_')
                    + ".slice"));

    assertThat(PodCgroups.find(fs.resolve("a"), uid)).contains(cgroupfs);
    assertThat(PodCgroups.find(fs.resolve("b"), uid)).contains(systemd);
    assertThat(PodCgroups.find(fs.resolve("a"), "00000000-0000-0000-0000-000000000000")).isEmpty();
    assertThatThrownBy(() -> PodCgroups.find(fs, "../../etc"))
        .hasMessage("not a pod UID: \"../../etc\"");
  }
}

package dev.soko.driver.iolimit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Throttles one block device for the processes of one pod, through the kernel's block IO
 * controller. Which hierarchy the node runs decides how: {@link V1} writes {@code
 * blkio.throttle.*_device} into the pod's cgroup and every cgroup under it, because v1's throttling
 * is not hierarchical (measured: a limit on a parent does not hold for its children, so the
 * containers' own cgroups need it); {@link V2} writes {@code io.max} into the pod's cgroup once,
 * which holds for every container under it.
 */
public sealed interface CgroupThrottle permits CgroupThrottle.V1, CgroupThrottle.V2 {
  /**
   * Sets {@code limits} (0 removing a limit) for {@code device} ("major:minor") in {@code
   * podCgroup}, the pod's directory in this hierarchy.
   */
  void apply(Path podCgroup, String device, IoLimits limits) throws IOException;

  /** The directory under which pods' cgroups are found. */
  Path root();

  /**
   * The hierarchy of a node whose cgroup filesystem is mounted at {@code cgroupFs} (usually {@code
   * /sys/fs/cgroup}): v2 when it is unified with the io controller enabled, else v1's blkio.
   */
  static CgroupThrottle detect(Path cgroupFs) throws IOException {
    Path controllers = cgroupFs.resolve("cgroup.controllers");
    if (Files.isRegularFile(controllers)
        && Files.readString(controllers).strip().matches("(.* )?io( .*)?")) {
      return new V2(cgroupFs);
    }
    Path blkio = cgroupFs.resolve("blkio");
    if (Files.isRegularFile(blkio.resolve("blkio.throttle.read_iops_device"))) {
      return new V1(blkio);
    }
    throw new IOException(
        "no block IO controller under "
            + cgroupFs
            + ": neither cgroup v2 with io nor cgroup v1's blkio with throttling");
  }

  /** cgroup v1 ({@code blkio}): every cgroup of the pod, containers included. */
  record V1(Path root) implements CgroupThrottle {
    @Override
    public void apply(Path podCgroup, String device, IoLimits limits) throws IOException {
      for (Path dir : cgroups(podCgroup)) {
        try {
          write(dir, "blkio.throttle.read_iops_device", device, limits.readIops());
          write(dir, "blkio.throttle.write_iops_device", device, limits.writeIops());
          write(dir, "blkio.throttle.read_bps_device", device, limits.readBytesPerSecond());
          write(dir, "blkio.throttle.write_bps_device", device, limits.writeBytesPerSecond());
        } catch (NoSuchFileException e) {
          // the container exited and its cgroup went: nothing of it left to limit
        }
      }
    }

    /** The pod's cgroup and every cgroup under it, now. */
    static List<Path> cgroups(Path podCgroup) throws IOException {
      try (var dirs = Files.walk(podCgroup)) {
        return dirs.filter(Files::isDirectory).toList();
      } catch (UncheckedIOException e) {
        // A container's cgroup went while it was walked: walk once more.
        try (var dirs = Files.walk(podCgroup)) {
          return dirs.filter(Files::isDirectory).toList();
        }
      }
    }

    /** "major:minor value"; a value of 0 removes the device's rule. */
    private static void write(Path dir, String file, String device, long value) throws IOException {
      Files.writeString(dir.resolve(file), device + " " + value);
    }
  }

  /** cgroup v2 ({@code io.max}): the pod's cgroup, which its containers' cgroups sit under. */
  record V2(Path root) implements CgroupThrottle {
    @Override
    public void apply(Path podCgroup, String device, IoLimits limits) throws IOException {
      Files.writeString(
          podCgroup.resolve("io.max"),
          device
              + " riops="
              + max(limits.readIops())
              + " wiops="
              + max(limits.writeIops())
              + " rbps="
              + max(limits.readBytesPerSecond())
              + " wbps="
              + max(limits.writeBytesPerSecond()));
    }

    private static String max(long value) {
      return value == 0 ? "max" : Long.toString(value);
    }
  }
}

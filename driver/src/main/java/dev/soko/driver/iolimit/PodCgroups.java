package dev.soko.driver.iolimit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Finds a pod's cgroup directory from its UID, whichever cgroup driver the kubelet uses: {@code
 * .../kubepods/burstable/pod<uid>} (cgroupfs) or {@code .../kubepods-burstable-pod<uid with _ for
 * ->.slice} (systemd), under any kubelet cgroup root.
 */
public final class PodCgroups {
  /** kubepods, its QoS class, the pod: a few levels under the kubelet's cgroup root. */
  static final int MAX_DEPTH = 6;

  private static final Pattern UID = Pattern.compile("[0-9a-f-]{36}");

  private PodCgroups() {}

  /** The pod's directory under {@code root}; empty when it is not there (yet). */
  public static Optional<Path> find(Path root, String podUid) throws IOException {
    if (!UID.matcher(podUid).matches()) {
      throw new IllegalArgumentException("not a pod UID: \"" + podUid + "\"");
    }
    String cgroupfs = "pod" + podUid;
    String systemd = "-pod" + podUid.replace('-', '_') + ".slice";
    try {
      return search(root, cgroupfs, systemd);
    } catch (UncheckedIOException e) {
      // Some container's cgroup went while the tree was walked: walk once more.
      return search(root, cgroupfs, systemd);
    }
  }

  private static Optional<Path> search(Path root, String cgroupfs, String systemd)
      throws IOException {
    try (var dirs =
        Files.find(root, MAX_DEPTH, (p, a) -> a.isDirectory() && named(p, cgroupfs, systemd))) {
      return dirs.findFirst();
    }
  }

  private static boolean named(Path dir, String cgroupfs, String systemd) {
    String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
    return name.equals(cgroupfs) || name.endsWith(systemd);
  }
}

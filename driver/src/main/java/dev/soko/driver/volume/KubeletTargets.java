package dev.soko.driver.volume;

import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The pod a publish target belongs to, read from the kubelet's directory layout: a filesystem
 * volume's {@code <kubelet>/pods/<pod uid>/volumes/...} and a block volume's {@code
 * <kubelet>/plugins/kubernetes.io/csi/volumeDevices/publish/<pv>/<pod uid>}.
 */
final class KubeletTargets {
  private static final Pattern UID = Pattern.compile("[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}");

  private KubeletTargets() {}

  static Optional<String> podUid(Path target) {
    int n = target.getNameCount();
    for (int i = 0; i + 2 < n; i++) {
      if (is(target, i, "pods") && uid(target, i + 1) && is(target, i + 2, "volumes")) {
        return Optional.of(target.getName(i + 1).toString());
      }
    }
    if (n >= 4 && is(target, n - 4, "volumeDevices") && is(target, n - 3, "publish")) {
      return uid(target, n - 1) ? Optional.of(target.getName(n - 1).toString()) : Optional.empty();
    }
    return Optional.empty();
  }

  private static boolean is(Path path, int index, String name) {
    return path.getName(index).toString().equals(name);
  }

  private static boolean uid(Path path, int index) {
    return UID.matcher(path.getName(index).toString()).matches();
  }
}

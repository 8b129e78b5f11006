package dev.soko.operator.model;

import java.util.Comparator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Soko release a driver image names, which the node and controller templates follow: what a
 * release added to them (a mount, an environment variable, a sidecar flag) is rendered for that
 * release's driver and newer only. So an operator upgraded alone, its operands held at the old
 * release, renders the old templates again and rolls no pod (docs/operations.md, "Upgrade"); the
 * new templates come with the new driver's rollout.
 *
 * <p>The release is read from the image's tag ({@code soko-driver:0.1.0}, {@code :v0.1.0}); a
 * pre-release counts as the release it leads to (a 0.2.0-SNAPSHOT driver has what 0.2.0 adds). An
 * image without a version tag (a digest, {@code latest}, a tag of the admin's own) is taken to be
 * the operator's own release: it gets every template feature.
 */
record DriverRelease(int major, int minor, int patch) implements Comparable<DriverRelease> {
  /**
   * The controller → node path (NodeRequests, SOKO_NAMESPACE), the host's cgroups for IO limits and
   * the node provisioner's API rate.
   */
  static final DriverRelease NODE_REQUESTS = new DriverRelease(0, 2, 0);

  /**
   * Volume group snapshots through the controller: the controller-mode driver labels the group
   * contents for the controller pod's csi-group-snapshotter ({@link
   * ControllerDeployment#GROUP_SNAPSHOTTER_ENV}) and hands the calls to the volumes' node.
   */
  static final DriverRelease GROUP_SNAPSHOTS = new DriverRelease(0, 2, 0);

  /**
   * The node-to-node data path: the drivers' --data-address and --data-tls-dir, the mounted
   * certificates and the node plugin's data port ({@link DataTls}).
   */
  static final DriverRelease DATA_PATH = new DriverRelease(0, 2, 0);

  /**
   * The node driver's NRI plugin (--nri-socket), for which the runtime's NRI socket directory is
   * mounted; an older driver gets no mount, so the new operator leaves its pods as they are.
   */
  static final DriverRelease NRI = new DriverRelease(0, 3, 0);

  /** The controller-mode driver's --immediate-growth (features.immediateGrowth false). */
  static final DriverRelease IMMEDIATE_GROWTH_SWITCH = new DriverRelease(0, 3, 0);

  /** What an image without a version tag is taken to be: newer than every release. */
  static final DriverRelease UNVERSIONED =
      new DriverRelease(Integer.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE);

  private static final Pattern VERSION_TAG = Pattern.compile("v?(\\d+)\\.(\\d+)\\.(\\d+)([-+].*)?");

  private static final Comparator<DriverRelease> ORDER =
      Comparator.comparingInt(DriverRelease::major)
          .thenComparingInt(DriverRelease::minor)
          .thenComparingInt(DriverRelease::patch);

  static DriverRelease of(String image) {
    String name = image;
    int digest = name.indexOf('@');
    if (digest >= 0) {
      name = name.substring(0, digest);
    }
    int colon = name.lastIndexOf(':');
    if (colon < 0 || colon < name.lastIndexOf('/')) {
      return UNVERSIONED;
    }
    Matcher m = VERSION_TAG.matcher(name.substring(colon + 1));
    if (!m.matches()) {
      return UNVERSIONED;
    }
    try {
      return new DriverRelease(
          Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
    } catch (NumberFormatException tooLong) {
      return UNVERSIONED;
    }
  }

  static DriverRelease of(ResolvedImages images) {
    return of(images.get(Component.DRIVER));
  }

  /** Whether this driver has what {@code release} added to the templates. */
  boolean has(DriverRelease release) {
    return compareTo(release) >= 0;
  }

  @Override
  public int compareTo(DriverRelease other) {
    return ORDER.compare(this, other);
  }
}

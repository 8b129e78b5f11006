package dev.soko.driver.cli;

import dev.soko.driver.config.PoolConfig;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The fields of one {@code --pool} value, {@code key=value} separated by ','. Said once, here: the
 * parser ({@link PoolSpec}), {@code --help} and the docs' pool table read this table.
 */
enum PoolField {
  NAME(
      "name",
      "NAME",
      true,
      "Required. Lower-case letters, digits and '-', at most 63 characters; StorageClasses name"
          + " the pool by it."),
  PATH("path", "DIR", true, "Required. The pool's absolute host directory."),
  CAPACITY(
      "capacity",
      "QUANTITY",
      false,
      "A Kubernetes quantity such as 100Gi or 500M; absent or 0: the size of DIR's filesystem,"
          + " read whenever asked."),
  OVERPROVISION(
      "overprovision",
      "RATIO",
      false,
      "Volume bytes per pool byte, a finite number >= 1.0. Default: 1.0."),
  FS(
      "fs",
      "TYPE[:TYPE]",
      false,
      "The filesystems volumes may use, the first the default: ext4 and xfs, default ext4:xfs."
          + " A btrfs-subvolume pool's only filesystem is btrfs: leave fs out or say fs=btrfs."),
  REQUIRE_MOUNT_POINT(
      "requireMountPoint",
      "true|false",
      false,
      "true: refuse DIR unless it is the root of a mounted filesystem (read from"
          + " /proc/self/mountinfo). Default: false."),
  ALLOW_ROOT_FILESYSTEM(
      "allowRootFilesystem",
      "true|false",
      false,
      "false: refuse DIR when it is on the filesystem of --kubelet-dir. Default: false."),
  BACKEND(
      "backend",
      Arrays.stream(PoolConfig.Backend.values())
          .map(PoolConfig.Backend::flagName)
          .collect(Collectors.joining("|")),
      false,
      "image-file (the default): sparse image files on loop devices, ext4 or xfs, block volumes"
          + " too. btrfs-subvolume: a volume is a btrfs subvolume limited by a qgroup,"
          + " bind-mounted, filesystem volumes only; DIR must be on a btrfs with quotas enabled,"
          + " or the pool is refused naming 'btrfs quota enable <mountpoint>'."),
  NODE_SELECTOR(
      "nodeSelector:KEY",
      "VALUE",
      false,
      "A node label the pool needs, one field per label (all must match, as a Pod's"
          + " nodeSelector), read from this node's Node object and watched. Without API server"
          + " access such a pool is not selected.");

  /** What precedes '=' in the value; {@code nodeSelector:} is followed by the label key. */
  final String key;

  final String value;
  final boolean required;
  final String help;

  PoolField(String key, String value, boolean required, String help) {
    this.key = key;
    this.value = value;
    this.required = required;
    this.help = help;
  }

  /** The prefix of a selector field's key: one field per label, the label's key after it. */
  static final String SELECTOR_PREFIX = "nodeSelector:";

  /** The field a key names, a {@code nodeSelector:KEY} as {@link #NODE_SELECTOR}. */
  static Optional<PoolField> of(String key) {
    if (key.startsWith(SELECTOR_PREFIX)) {
      return Optional.of(NODE_SELECTOR);
    }
    return Arrays.stream(values()).filter(f -> f != NODE_SELECTOR && f.key.equals(key)).findFirst();
  }

  /** {@code key=VALUE}, as written in a pool spec. */
  String synopsis() {
    return key + "=" + value;
  }

  /**
   * The whole grammar in one line: {@code name=NAME,path=DIR[,capacity=QUANTITY]...
   * [,nodeSelector:KEY=VALUE]...}.
   */
  static String grammar() {
    StringBuilder text = new StringBuilder();
    for (PoolField field : values()) {
      if (field.required) {
        text.append(text.length() == 0 ? "" : ",").append(field.synopsis());
      } else {
        text.append("[,").append(field.synopsis()).append(']');
      }
    }
    return text.append("...").toString();
  }

  /** The known keys, for an error message. */
  static String keys() {
    return Arrays.stream(values()).map(f -> f.key).collect(Collectors.joining(", ", "[", "]"));
  }
}

package dev.soko.driver.csi;

import csi.v1.Csi.VolumeCapability;
import csi.v1.Csi.VolumeCapability.AccessMode;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.volume.StorageException;
import java.util.List;
import java.util.Set;

/**
 * What the driver accepts in a {@code VolumeCapability}: single-node access modes only (a volume
 * lives on one node's pool), block or mount access, an allow-listed filesystem and allow-listed
 * mount flags. Everything else is refused with a message that names the offending value.
 */
public final class Capabilities {
  /**
   * Filesystems some backend can serve, from the table of backends. Which pool offers which is the
   * pool's configuration, checked by CreateVolume.
   */
  public static final Set<String> FS_TYPES = PoolConfig.Backend.allFsTypes();

  /**
   * Mount options that change only access or timing behaviour. Options that could mount something
   * else ({@code bind}, {@code remount}, {@code loop}, {@code offset=}, {@code context=}...) are
   * deliberately absent.
   */
  static final Set<String> MOUNT_FLAGS =
      Set.of(
          "ro",
          "rw",
          "noatime",
          "relatime",
          "strictatime",
          "nodiratime",
          "lazytime",
          "nosuid",
          "nodev",
          "noexec",
          "sync",
          "dirsync",
          "discard",
          "nodiscard",
          "nouuid",
          "norecovery");

  static final Set<AccessMode.Mode> ACCESS_MODES =
      Set.of(
          AccessMode.Mode.SINGLE_NODE_WRITER,
          AccessMode.Mode.SINGLE_NODE_READER_ONLY,
          AccessMode.Mode.SINGLE_NODE_SINGLE_WRITER,
          AccessMode.Mode.SINGLE_NODE_MULTI_WRITER);

  static final int MAX_MOUNT_FLAGS = 32;

  /** A validated capability in the engine's terms; {@code fsType} is empty for block or default. */
  public record Parsed(
      AccessType accessType, String fsType, List<String> mountFlags, AccessMode.Mode mode) {
    boolean readOnly() {
      return mode == AccessMode.Mode.SINGLE_NODE_READER_ONLY;
    }
  }

  private Capabilities() {}

  /** Validates one capability or throws INVALID_ARGUMENT saying why. */
  public static Parsed parse(VolumeCapability capability) {
    String problem = problem(capability);
    if (problem != null) {
      throw StorageException.invalid("unsupported volume capability: %s", problem);
    }
    AccessMode.Mode mode = capability.getAccessMode().getMode();
    if (capability.hasBlock()) {
      return new Parsed(AccessType.BLOCK, "", List.of(), mode);
    }
    VolumeCapability.MountVolume mount = capability.getMount();
    return new Parsed(
        AccessType.FILESYSTEM, mount.getFsType(), List.copyOf(mount.getMountFlagsList()), mode);
  }

  /** All capabilities of a request; at least one is required. */
  public static List<Parsed> parseAll(List<VolumeCapability> capabilities) {
    if (capabilities.isEmpty()) {
      throw StorageException.invalid("volume_capabilities is required");
    }
    if (capabilities.size() > 16) {
      throw StorageException.invalid("volume_capabilities has more than 16 entries");
    }
    return capabilities.stream().map(Capabilities::parse).toList();
  }

  /**
   * Why the driver cannot serve a capability, or null when it can. ValidateVolumeCapabilities
   * reports this as a message instead of an error.
   */
  static String problem(VolumeCapability capability) {
    if (!capability.hasAccessMode()) {
      return "access_mode is required";
    }
    AccessMode.Mode mode = capability.getAccessMode().getMode();
    if (!ACCESS_MODES.contains(mode)) {
      return "access mode " + mode + " is not supported, only single-node modes are";
    }
    if (capability.hasBlock()) {
      return null;
    }
    if (!capability.hasMount()) {
      return "access_type (block or mount) is required";
    }
    VolumeCapability.MountVolume mount = capability.getMount();
    String fsType = mount.getFsType();
    if (!fsType.isEmpty() && !FS_TYPES.contains(fsType)) {
      return "fs_type " + shorten(fsType) + " is not one of " + FS_TYPES;
    }
    if (mount.getMountFlagsCount() > MAX_MOUNT_FLAGS) {
      return "more than " + MAX_MOUNT_FLAGS + " mount_flags";
    }
    for (String flag : mount.getMountFlagsList()) {
      if (!MOUNT_FLAGS.contains(flag)) {
        return "mount flag " + shorten(flag) + " is not allowed";
      }
    }
    if (!mount.getVolumeMountGroup().isEmpty()) {
      return "volume_mount_group is not supported (the driver does not advertise VOLUME_MOUNT_GROUP)";
    }
    return null;
  }

  /** Keeps client-chosen text in error messages short. */
  static String shorten(String value) {
    return value.length() <= 64 ? "'" + value + "'" : "'" + value.substring(0, 64) + "...'";
  }
}

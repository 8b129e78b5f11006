package dev.soko.driver.volume;

import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountFlags;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grows the ext4 filesystem of a volume that is staged but not published by taking its staging
 * mount down, growing the filesystem unmounted (e2fsck, then resize2fs) and mounting it again at
 * the staging path with the flags it was staged with.
 *
 * <p>This is the first choice whenever the volume is unpublished, not a fallback after a refused
 * online resize. It needs no capability, so the result does not depend on the node: root without
 * CAP_SYS_RESOURCE (hardened and user-namespaced nodes) may not grow a mounted ext4, and trying
 * first would only add a failure to every such call. Nothing uses an unpublished filesystem, and
 * the volume's lock keeps a publish out until it is mounted again, so taking it down costs a
 * workload nothing; it also checks the filesystem before it grows, and is the same e2fsck and
 * resize2fs that staging runs for a volume grown while unstaged. The price, e2fsck reading the
 * filesystem's metadata, is paid once per growth, when the kubelet is about to start a pod anyway.
 *
 * <p>Strict about "unpublished": the only mount of the filesystem must be the one at the recorded
 * staging path; any other (a publish target, or another bind of the staging mount, both of which
 * show the device or the same superblock in mountinfo) sends the volume to online growth. A mount
 * of the filesystem in another mount namespace, which this one cannot see, makes e2fsck and
 * resize2fs fail to open the device exclusively ("in use", EBUSY): it is not grown, and the staging
 * mount is made again.
 *
 * <p>A failure after the unmount mounts it again and says what happened. A crash between the two
 * leaves a record "staged" at a path with no mount and the device attached, which recovery reports
 * as a lost staging mount and which the next NodeStageVolume (which grows and mounts it) or
 * NodeExpandVolume (here) repairs.
 */
final class OfflineGrowth {
  private static final Logger LOG = LoggerFactory.getLogger(OfflineGrowth.class);
  private static final String EXT4 = "ext4";

  private final Catalog catalog;
  private final Mounter mounter;
  private final PathPolicy paths;
  private final Predicate<VolumeRecord> stayMounted;

  OfflineGrowth(
      Catalog catalog, Mounter mounter, PathPolicy paths, Predicate<VolumeRecord> stayMounted) {
    this.stayMounted = stayMounted;
    this.catalog = catalog;
    this.mounter = mounter;
    this.paths = paths;
  }

  /**
   * Grows the filesystem of {@code record} on {@code device} offline when the volume is staged and
   * unpublished; false, having done nothing, when it must grow online (xfs, published, not staged).
   */
  boolean grow(VolumeRecord record, String device) {
    if (!EXT4.equals(record.fsType()) || record.stagedAt().isEmpty()) {
      return false;
    }
    if (stayMounted.test(record)) {
      return false; // its attributes keep state in the mount (an encryption key): grown online
    }
    Path staging = Path.of(record.stagedAt());
    List<MountEntry> table = mounter.mounts();
    List<MountEntry> users = mountsOfFilesystem(table, device);
    if (users.isEmpty()) {
      mountAgain(record, device, staging, table);
      return true;
    }
    if (users.size() != 1 || !users.get(0).mountPoint().equals(staging)) {
      return false; // published, or mounted somewhere else too: never taken down
    }
    List<String> flags = record.stageFlags().orElseGet(() -> MountFlags.flagsOf(users.get(0)));
    if (record.stageFlags().isEmpty()) {
      // Staged by a driver that did not record its flags: recorded now, before the unmount, so
      // that a crash after it still knows how to mount it again.
      catalog.saveVolume(record.withStaged(record.stagedAt(), flags));
    }
    if (mounter.fillsDevice(device, EXT4)) {
      LOG.info("volume {} already fills its device; nothing to grow", record.id());
      return true;
    }
    mounter.unmount(paths.check("staging path", staging));
    growAndMount(record, device, staging, flags);
    LOG.info(
        "volume {} grown offline: its staging mount {} was taken down, grown and made again",
        record.id(),
        staging);
    return true;
  }

  /**
   * The volume is recorded as staged, yet nothing mounts its filesystem: an offline growth cut
   * short by a crash (or the mount was taken away). Grown and mounted again as it was staged, when
   * the record knows how.
   */
  private void mountAgain(
      VolumeRecord record, String device, Path staging, List<MountEntry> table) {
    Optional<List<String>> flags = record.stageFlags();
    if (flags.isEmpty() || table.stream().anyMatch(m -> m.mountPoint().equals(staging))) {
      throw StorageException.precondition(
          "volume %s is recorded as staged at %s but is not mounted there; stage it again",
          record.id(), staging);
    }
    LOG.warn(
        "volume {} is recorded as staged at {} but not mounted there (an offline growth cut"
            + " short?); growing it and mounting it there again",
        record.id(),
        staging);
    MountPoints.createDirectory(paths.check("staging path", staging));
    growAndMount(record, device, staging, flags.get());
    LOG.info("volume {} grown offline and mounted again at {}", record.id(), staging);
  }

  /** Grows the unmounted filesystem, then mounts it at {@code staging} whether or not that grew. */
  private void growAndMount(VolumeRecord record, String device, Path staging, List<String> flags) {
    RuntimeException growth = null;
    try {
      mounter.growUnmounted(device, EXT4);
    } catch (RuntimeException e) {
      growth = e;
    }
    try {
      mounter.mount(device, staging, EXT4, flags);
    } catch (RuntimeException e) {
      if (growth != null) {
        e.addSuppressed(growth);
      }
      throw failure(
          e,
          "volume %s was unmounted from its staging path %s to grow offline%s, and mounting it"
              + " there again failed: %s; the next NodeStageVolume or NodeExpandVolume mounts it"
              + " again",
          record.id(),
          staging,
          growth == null ? "" : " (which failed: " + growth.getMessage() + ")",
          e.getMessage());
    }
    if (growth != null) {
      throw failure(
          growth,
          "cannot grow volume %s offline: %s; it is mounted again at %s, at its former size",
          record.id(),
          growth.getMessage(),
          staging);
    }
  }

  /** Every mount of the filesystem on {@code device}: of the device, or of its superblock. */
  static List<MountEntry> mountsOfFilesystem(List<MountEntry> table, String device) {
    // A bind of the staging mount shows its source too, but the superblock's device number is
    // what every mount of the filesystem shares, whatever name it was mounted by.
    Set<String> numbers =
        table.stream()
            .filter(m -> m.source().equals(device))
            .map(MountEntry::device)
            .collect(Collectors.toSet());
    return table.stream()
        .filter(m -> Health.mounts(m, device) || numbers.contains(m.device()))
        .toList();
  }

  /** A StorageException under the reason of {@code cause}, with a message that says the rest. */
  private static StorageException failure(RuntimeException cause, String format, Object... args) {
    StorageException mapped = Failures.asStorage(cause);
    StorageException.Reason reason =
        mapped == null ? StorageException.Reason.INTERNAL : mapped.reason();
    return new StorageException(reason, String.format(format, args), cause);
  }
}

package dev.soko.driver.volume;

import dev.soko.driver.backend.DirectoryVolumes;
import dev.soko.driver.backend.MountIdentity;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stage, publish and their reverses for a directory volume (a btrfs subvolume): staging bind-mounts
 * the volume's directory, publishing binds the staging path, each with the request's per-mount
 * flags. A mount is this volume's when mountinfo shows the pool filesystem's device and the volume
 * directory as its root ({@link MountIdentity}); nothing else is ever unmounted. Every call is
 * idempotent, and {@link NodeVolumes} holds the volume's lock around it.
 */
final class DirectoryMounts implements VolumeMounts {
  private static final Logger LOG = LoggerFactory.getLogger(DirectoryMounts.class);
  private static final int MAX_STACKED = 8;

  private final Catalog catalog;
  private final Mounter mounter;
  private final DirectoryVolumes volumes;

  DirectoryMounts(Catalog catalog, Mounter mounter, DirectoryVolumes volumes) {
    this.catalog = catalog;
    this.mounter = mounter;
    this.volumes = volumes;
  }

  @Override
  public void stage(
      VolumeRecord record, Path location, Path staging, List<String> flags, VolumeForm form) {
    MountIdentity identity = volumes.identity(pool(record), location);
    String stagedAt = record.stagedAt();
    if (!stagedAt.isEmpty()
        && !stagedAt.equals(staging.toString())
        && mountedAt(Path.of(stagedAt), identity)) {
      throw StorageException.precondition(
          "volume %s is already staged at %s; unstage it there before staging it at %s",
          record.id(), stagedAt, staging);
    }
    Optional<MountEntry> existing = mounter.mountAt(staging);
    if (existing.isPresent() && !identity.matches(existing.get())) {
      throw StorageException.alreadyExists("staging path %s already holds another mount", staging);
    }
    if (existing.isEmpty()) {
      MountPoints.createDirectory(staging);
      NodeVolumes.bind(mounter, location, staging, flags);
    }
    if (!stagedAt.equals(staging.toString())) {
      commitSubvolume(record, location);
      catalog.saveVolume(record.withStagedAt(staging.toString()));
    }
  }

  /**
   * Puts the volume's directory on the disk before its staging is recorded. A btrfs subvolume
   * create (with its limit and flags) reaches the disk only with the filesystem's next commit, up
   * to 30 s later, while the record is durable when saved; recovery makes a lost blank volume again
   * only if it was never staged, so a power cut in between lost the volume for good
   * (PowerLossIT.aVolumeStagedJustBeforeAPowerCutStagesAgainAfterIt). An fsync of a subvolume made
   * in the running transaction commits the transaction, as its tree is not on the disk yet; of an
   * older one it has nothing to write.
   */
  private static void commitSubvolume(VolumeRecord record, Path location) {
    try {
      Pool.fsync(location);
    } catch (UncheckedIOException e) {
      throw StorageException.internal("cannot flush volume " + record.id() + " to disk", e);
    }
  }

  @Override
  public void unstage(VolumeRecord record, Path location, Path staging) {
    MountIdentity identity = volumes.identity(pool(record), location);
    // Checked before anything is unmounted: a published volume keeps its staging mount.
    List<Path> published =
        mounter.mounts().stream()
            .filter(identity::matches)
            .map(MountEntry::mountPoint)
            .filter(mountPoint -> !mountPoint.equals(staging))
            .toList();
    if (!published.isEmpty()) {
      throw StorageException.precondition(
          "volume %s is still published at %s; unpublish it first", record.id(), published);
    }
    peel(record, identity, staging, false);
    if (!record.stagedAt().isEmpty()) {
      catalog.saveVolume(record.withStagedAt(""));
    }
  }

  @Override
  public void publish(
      VolumeRecord record,
      Path location,
      Path staging,
      Path target,
      List<String> flags,
      boolean readOnly,
      VolumeForm form) {
    MountIdentity identity = volumes.identity(pool(record), location);
    Optional<MountEntry> existing = mounter.mountAt(target);
    if (existing.isPresent()) {
      if (identity.matches(existing.get()) && existing.get().readOnly() == readOnly) {
        return;
      }
      throw StorageException.alreadyExists(
          "target path %s already holds a different mount of this or another volume", target);
    }
    if (!mountedAt(staging, identity)) {
      throw StorageException.precondition("volume %s is not staged at %s", record.id(), staging);
    }
    boolean created = !Files.exists(target, LinkOption.NOFOLLOW_LINKS);
    MountPoints.createDirectory(target);
    try {
      NodeVolumes.bind(mounter, staging, target, flags);
    } catch (RuntimeException e) {
      if (created) {
        MountPoints.deleteQuietly(target); // creating the target is the SP's part
      }
      throw e;
    }
  }

  @Override
  public void unpublish(VolumeRecord record, Path location, Path target) {
    peel(record, volumes.identity(pool(record), location), target, true);
    try {
      Files.deleteIfExists(target);
    } catch (IOException e) {
      LOG.warn("cannot remove target {} of volume {}: {}", target, record.id(), e.toString());
    }
  }

  /**
   * Unmounts this volume's mounts stacked at {@code path} (repeated attempts can stack binds); a
   * mount there of anything else is left alone, and refused when {@code refuseOthers}.
   */
  private void peel(VolumeRecord record, MountIdentity identity, Path path, boolean refuseOthers) {
    for (int i = 0; i < MAX_STACKED; i++) {
      Optional<MountEntry> mount = mounter.mountAt(path);
      if (mount.isEmpty()) {
        return;
      }
      if (!identity.matches(mount.get())) {
        if (refuseOthers) {
          throw StorageException.precondition(
              "target path %s holds a mount that is not volume %s; leaving it alone",
              path, record.id());
        }
        return;
      }
      mounter.unmount(path);
    }
  }

  private boolean mountedAt(Path path, MountIdentity identity) {
    return mounter.mountAt(path).filter(identity::matches).isPresent();
  }

  private Pool pool(VolumeRecord record) {
    return catalog.pool(record.pool());
  }
}

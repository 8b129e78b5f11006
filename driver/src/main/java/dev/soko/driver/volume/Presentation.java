package dev.soko.driver.volume;

import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.Map;

/**
 * How the node side hands one backend's volumes to workloads, and reads them back: stage, publish
 * and their reverses, growth on the node, stats and conditions. Chosen by the backend ({@link
 * Presentations}): {@link BlockPresentation} attaches, formats and mounts a device, {@link
 * DirectoryPresentation} bind-mounts a directory. The callers ({@link NodeVolumes}, {@link
 * NodeExpansion}, {@link VolumeStats}, {@link Health}) check the request and hold the volume's
 * lock; {@code location} is the volume's storage, which they have seen exists where it must.
 */
interface Presentation {

  /** Stage, publish and their reverses. */
  VolumeMounts mounts();

  /**
   * NodeExpandVolume's node work after the storage grew to {@code size}: makes the volume as seen
   * by the workload that large. {@code volumePath} is the request's.
   */
  void expand(VolumeRecord record, Path location, long size, Path volumePath);

  /**
   * A growth handed to the node by the controller, after the storage grew to {@code size}: makes
   * the volume as the workload sees it that large now, where it can, and answers whether
   * NodeExpandVolume is still needed. It never fails for the part it leaves to NodeExpandVolume:
   * whatever it could not grow, it says so in the answer (and the log), and the kubelet grows it as
   * before.
   */
  boolean growNow(VolumeRecord record, Path location, long size);

  /** Whether ControllerExpandVolume must ask for node work after the storage grew. */
  boolean expandsOnNode(VolumeRecord record, Path location);

  /** True when the volume is really staged or published on this host, whatever its record says. */
  boolean inUse(Pool pool, Path location);

  /**
   * How the volume is kept still while it is copied: its staged filesystem frozen, nothing (it is
   * not in use), or not at all (it is in use with no filesystem of its own to freeze).
   */
  CopyHold copyHold(Pool pool, VolumeRecord record, Path location);

  /** NodeGetVolumeStats of the volume at {@code path}. */
  VolumeUsage usage(
      VolumeRecord record,
      Pool pool,
      Path location,
      Health.View view,
      VolumeCondition condition,
      Path path);

  /** The condition of a volume whose storage exists and whose record says it is staged. */
  VolumeCondition stagedCondition(Health.View view, Pool pool, VolumeRecord record, Path location);

  /** Recovery's look at what is attached to storage in {@code pool}; none for directories. */
  Map<AttachedDevice, Path> attachedIn(Pool pool);

  /** Detaches a device {@link #attachedIn} found. */
  void detach(String device);
}

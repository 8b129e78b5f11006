package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.state.VolumeRecord;

/**
 * A growth the controller hands to the volume's node (ControllerExpandVolume in a cluster): grants
 * and reserves the new size as NodeExpandVolume would, grows the storage, then has the pool's
 * {@link Presentation} grow what the workload sees now, so the kubelet has nothing left to do and
 * the claim shows its new size in seconds, not at the kubelet's next sync of the pod.
 *
 * <p>The answer says whether NodeExpandVolume is still needed: only the storage step can fail the
 * call (a shrink, a pool without the room, a lost image), and it fails before anything changed, so
 * the claim stays usable at its old size. A pool without the room is OUT_OF_RANGE, the code the
 * resizer takes as infeasible, so a user may lower the request back. Idempotent: a volume already
 * at the size grows nothing and answers the same; the volume's lock orders it with a concurrent
 * stage, which then finds the storage grown and grows the filesystem as it stages it.
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class ImmediateGrowth {
  private final Catalog catalog;
  private final VolumeLocks locks;
  private final Backends backends;
  private final Presentations presentations;
  private final GrowthGrants grants;

  ImmediateGrowth(
      Catalog catalog,
      VolumeLocks locks,
      Backends backends,
      Presentations presentations,
      GrowthGrants grants) {
    this.catalog = catalog;
    this.locks = locks;
    this.backends = backends;
    this.presentations = presentations;
    this.grants = grants;
  }

  ExpandResult grow(String volumeId, long requiredBytes, long limitBytes) {
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = catalog.readyVolume(volumeId);
      long size = grants.grant(record, requiredBytes, limitBytes);
      record = catalog.readyVolume(volumeId); // as saved with its new capacity
      NodeExpansion.Grown grown = NodeExpansion.growStorage(catalog, backends, record, size);
      return new ExpandResult(
          size, presentations.of(grown.pool()).growNow(record, grown.image(), size));
    }
  }
}

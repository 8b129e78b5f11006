package dev.soko.driver.volume;

import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.VolumeRecord;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A CreateVolume for a name that already has a volume: that volume when the request asks for the
 * same one (CreateVolume is idempotent by name), ALREADY_EXISTS when it asks for another, ABORTED
 * while the first create is still under way. Callers hold the name's lock.
 */
final class RepeatedCreates {
  private final VolumeAttributes attributes;

  RepeatedCreates(VolumeAttributes attributes) {
    this.attributes = attributes;
  }

  Volume sameOrConflict(
      VolumeRecord existing, VolumeRequest request, Pool pool, String fsType, ContentSource src) {
    long capacity = existing.capacityBytes();
    boolean fits =
        capacity >= request.requiredBytes()
            && (request.limitBytes() == 0 || capacity <= request.limitBytes());
    boolean same =
        existing.pool().equals(pool.name())
            && existing.accessType() == request.accessType()
            && existing.fsType().equals(fsType)
            && existing.source().equals(src)
            && sameParameters(
                existing.parameters(), Objects.requireNonNullElse(request.parameters(), Map.of()))
            && existing.mutableParameters().equals(attributes.check(pool, request, fsType));
    if (!fits || !same) {
      throw StorageException.alreadyExists(
          "a volume named %s exists with a different capacity, type, source or parameters",
          Catalog.shown(existing.name()));
    }
    if (existing.state() != RecordState.READY) {
      throw new StorageException(
          StorageException.Reason.ABORTED, "volume " + existing.id() + " is still being created");
    }
    return existing.toVolume(VolumeCondition.HEALTHY);
  }

  /**
   * Whether a volume kept {@code kept} for a request of {@code requested}: the same, but for the
   * attributes' keys a copy kept from its source ({@link VolumeAttributes#copiedParameters}).
   */
  private boolean sameParameters(Map<String, String> kept, Map<String, String> requested) {
    List<String> attributeKeys = attributes.classParameters();
    for (var entry : kept.entrySet()) {
      String asked = requested.get(entry.getKey());
      if (asked == null
          ? !attributeKeys.contains(entry.getKey())
          : !asked.equals(entry.getValue())) {
        return false;
      }
    }
    return kept.keySet().containsAll(requested.keySet());
  }
}

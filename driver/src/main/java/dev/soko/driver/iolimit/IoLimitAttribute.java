package dev.soko.driver.iolimit;

import dev.soko.driver.attribute.AttributeEffects;
import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.attribute.AttributeKey;
import dev.soko.driver.attribute.AttributeKind;
import dev.soko.driver.attribute.Publication;
import dev.soko.driver.attribute.VolumeShape;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * IO limits as a kind of volume attribute: the four mutable parameters of a VolumeAttributesClass
 * ({@link IoLimits}), kept in plain numbers. A limit needs a block device of the volume's own: an
 * image-file volume has its loop device; a btrfs subvolume shares the pool's device with every
 * other volume, so no per-volume block IO limit would be honest there and the parameters are
 * refused. Applied to the pods a volume is published to once {@link #throttleWith} gave it the
 * node's block IO controller; until then (none on this node) limits are kept but not applied.
 */
public final class IoLimitAttribute implements AttributeKind {
  private static final List<AttributeKey> KEYS =
      List.of(
          AttributeKey.mutableParameter(IoLimits.READ_IOPS),
          AttributeKey.mutableParameter(IoLimits.WRITE_IOPS),
          AttributeKey.mutableParameter(IoLimits.READ_BPS),
          AttributeKey.mutableParameter(IoLimits.WRITE_BPS));

  private volatile Optional<AttributeEffects> effects = Optional.empty();

  @Override
  public String name() {
    return "IO limit";
  }

  @Override
  public List<AttributeKey> keys() {
    return KEYS;
  }

  @Override
  public void admit(VolumeShape volume) {
    if (!volume.ownBlockDevice()) {
      throw AttributeException.refused(
          "IO limits need a block device of the volume's own; the volumes of pool %s (%s) share"
              + " the pool's device",
          volume.pool(), volume.backend());
    }
  }

  @Override
  public Map<String, String> check(Map<String, String> given, VolumeShape volume) {
    try {
      return IoLimits.parse(given).parameters();
    } catch (IllegalArgumentException e) {
      throw AttributeException.refused("%s", e.getMessage());
    }
  }

  @Override
  public Optional<AttributeEffects> effects() {
    return effects;
  }

  /** From now on, the limits are applied through {@code throttles} to the pods of publications. */
  public void throttleWith(PodThrottles throttles) {
    effects = Optional.of(new Throttling(throttles));
  }

  /** Each publication to a pod, on the volume's own device, handed to {@link PodThrottles}. */
  private record Throttling(PodThrottles throttles) implements AttributeEffects {
    @Override
    public void published(Publication p, Map<String, String> values) {
      p.deviceNumber()
          .ifPresent(
              device ->
                  throttles.published(
                      p.target(), p.volumeId(), p.podUid(), device, IoLimits.parse(values)));
    }

    @Override
    public void unpublished(String volumeId, Path target) {
      throttles.unpublished(target);
    }

    @Override
    public void changed(String volumeId, Map<String, String> values) {
      throttles.changed(volumeId, IoLimits.parse(values));
    }
  }
}

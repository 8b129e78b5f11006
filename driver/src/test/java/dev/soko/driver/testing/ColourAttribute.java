package dev.soko.driver.testing;

import dev.soko.driver.attribute.AttributeEffects;
import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.attribute.AttributeKey;
import dev.soko.driver.attribute.AttributeKind;
import dev.soko.driver.attribute.Publication;
import dev.soko.driver.attribute.VolumeShape;
import dev.soko.driver.model.AccessType;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A kind of volume attribute that exists only in tests, shaped as the next real kind will be: a
 * StorageClass parameter fixed at creation ({@code colour}: red or green, filesystem volumes only)
 * and a mutable one ({@code shade}: light or dark). It acts by writing down what it was told, so a
 * test can see that a kind declared outside the engine is checked, kept and applied by it.
 */
public final class ColourAttribute implements AttributeKind {
  public static final String COLOUR = "colour";
  public static final String SHADE = "shade";

  /** What the effects were told, one line each, e.g. {@code "staged vol-1 {colour=red}"}. */
  public final List<String> events = new CopyOnWriteArrayList<>();

  @Override
  public String name() {
    return "colour";
  }

  @Override
  public List<AttributeKey> keys() {
    return List.of(AttributeKey.classParameter(COLOUR), AttributeKey.mutableParameter(SHADE));
  }

  @Override
  public void admit(VolumeShape volume) {
    if (volume.accessType() != AccessType.FILESYSTEM) {
      throw AttributeException.refused("a colour needs a filesystem volume");
    }
  }

  @Override
  public Map<String, String> check(Map<String, String> given, VolumeShape volume) {
    given.forEach(
        (key, value) -> {
          List<String> allowed =
              key.equals(COLOUR) ? List.of("red", "green") : List.of("light", "dark");
          if (!allowed.contains(value)) {
            throw AttributeException.refused("%s must be one of %s, not %s", key, allowed, value);
          }
        });
    return given;
  }

  @Override
  public Optional<AttributeEffects> effects() {
    return Optional.of(
        new AttributeEffects() {
          @Override
          public void staged(String volumeId, Path stagingPath, Map<String, String> values) {
            events.add("staged " + volumeId + " " + sorted(values));
          }

          @Override
          public void unstaged(String volumeId, Path stagingPath) {
            events.add("unstaged " + volumeId);
          }

          @Override
          public void published(Publication p, Map<String, String> values) {
            events.add("published " + p.volumeId() + " to " + p.podUid() + " " + sorted(values));
          }

          @Override
          public void unpublished(String volumeId, Path target) {
            events.add("unpublished " + volumeId);
          }

          @Override
          public void changed(String volumeId, Map<String, String> values) {
            events.add("changed " + volumeId + " " + sorted(values));
          }
        });
  }

  private static String sorted(Map<String, String> values) {
    return new java.util.TreeMap<>(values).toString();
  }
}

package dev.soko.driver.attribute;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A kind of per-volume attribute: its keys and where each is given, how its values are checked
 * against a volume, and what it does on the node. Declared once, in a package of its own, and
 * handed to {@link AttributeRegistry}.
 */
public interface AttributeKind {
  /** How messages name it, e.g. "IO limit" ("unknown IO limit parameter …"). */
  String name();

  /** The keys it owns, in the order messages list them; no key is owned by two kinds. */
  List<AttributeKey> keys();

  /**
   * Refuses a volume that cannot have this kind at all, before its values are looked at (IO limits
   * need a block device of the volume's own).
   *
   * @throws AttributeException saying why
   */
  default void admit(VolumeShape volume) {}

  /**
   * The values to keep for {@code given} (only this kind's keys of one source, at least one), on a
   * volume shaped as {@code volume}: the same values in the form the record keeps (a kind may
   * normalise, e.g. {@code 4Mi} to {@code 4194304}, or drop a key that sets nothing).
   *
   * @throws AttributeException when a value is malformed or the volume cannot have it
   */
  Map<String, String> check(Map<String, String> given, VolumeShape volume);

  /**
   * The features the volume's filesystem must be made with for these values (ext4's {@code
   * encrypt}); none by default, and a volume with none of this kind's values is made as ever.
   */
  default List<String> filesystemFeatures(Map<String, String> values) {
    return List.of();
  }

  /**
   * The directory, relative to the filesystem's root, that pods see instead of the root; empty for
   * the root itself (the default).
   */
  default Optional<String> presentedDirectory(Map<String, String> values) {
    return Optional.empty();
  }

  /**
   * Whether a staged volume with these values must stay mounted while staged: its mount holds state
   * a remount loses (an encryption key lives in the mounted filesystem's keyring), so the engine
   * grows its filesystem online rather than taking the staging mount down. False by default.
   */
  default boolean mountHoldsState(Map<String, String> values) {
    return false;
  }

  /**
   * The values a copy (a clone or a restore) keeps, given the values of its {@code source} and
   * those its request asked for ({@code requested}); the requested ones by default. A kind whose
   * values describe the content itself (its encryption) makes the copy keep the source's.
   *
   * @throws AttributeException when the copy cannot have the requested values
   */
  default Map<String, String> copied(Map<String, String> source, Map<String, String> requested) {
    return requested;
  }

  /** What it does on the node now; empty while it does nothing (values are still kept). */
  default Optional<AttributeEffects> effects() {
    return Optional.empty();
  }
}

package dev.soko.driver.volume;

/** Validation of the names clients give volumes and snapshots (never used in paths). */
final class Names {
  /** Kubernetes object names are at most 253 characters; leave headroom for prefixes. */
  static final int MAX_LENGTH = 512;

  private Names() {}

  static String check(String what, String name) {
    if (name == null || name.isEmpty()) {
      throw StorageException.invalid("%s name is required", what);
    }
    if (name.length() > MAX_LENGTH) {
      throw StorageException.invalid("%s name is longer than %d characters", what, MAX_LENGTH);
    }
    if (name.chars().anyMatch(Character::isISOControl)) {
      throw StorageException.invalid("%s name contains control characters", what);
    }
    return name;
  }
}

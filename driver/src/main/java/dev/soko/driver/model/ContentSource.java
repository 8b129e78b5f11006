package dev.soko.driver.model;

/** Where a new volume's data comes from. */
public sealed interface ContentSource {
  /** A blank volume. */
  record Empty() implements ContentSource {}

  /** A copy of a snapshot. */
  record FromSnapshot(String snapshotId) implements ContentSource {}

  /** A clone of another volume. */
  record FromVolume(String volumeId) implements ContentSource {}

  ContentSource EMPTY = new Empty();
}

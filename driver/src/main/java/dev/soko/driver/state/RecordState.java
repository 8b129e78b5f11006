package dev.soko.driver.state;

/**
 * Where a record stands in its life. Writes are ordered so a crash leaves a state recovery can
 * finish: the record is written CREATING before its image exists and READY only after the image is
 * complete; it is marked DELETING before its image is removed.
 */
public enum RecordState {
  CREATING,
  READY,
  DELETING
}

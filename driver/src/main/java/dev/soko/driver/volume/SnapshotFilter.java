package dev.soko.driver.volume;

/** ListSnapshots filters; an empty string means "any". */
public record SnapshotFilter(String snapshotId, String sourceVolumeId) {
  public static final SnapshotFilter ALL = new SnapshotFilter("", "");
}

package dev.soko.driver.model;

/** The CSI volume condition: abnormal with a message that says why, or healthy. */
public record VolumeCondition(boolean abnormal, String message) {
  public static final VolumeCondition HEALTHY = new VolumeCondition(false, "volume is healthy");
}

package dev.soko.driver.volume;

import dev.soko.driver.attribute.NodeSecrets;
import dev.soko.driver.model.AccessType;
import java.nio.file.Path;
import java.util.List;

/**
 * A validated NodeStageVolume request. {@code mountFlags} are already allow-listed; {@code secrets}
 * are the node-stage Secret's, for the volume's attributes (an encrypted volume's key), and show
 * their field names only.
 */
public record StageRequest(
    String volumeId,
    Path stagingPath,
    AccessType accessType,
    String fsType,
    List<String> mountFlags,
    NodeSecrets secrets) {
  /** A stage with no secrets. */
  public StageRequest(
      String volumeId,
      Path stagingPath,
      AccessType accessType,
      String fsType,
      List<String> mountFlags) {
    this(volumeId, stagingPath, accessType, fsType, mountFlags, NodeSecrets.none());
  }
}

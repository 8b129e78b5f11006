package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;
import java.nio.file.Path;
import java.util.List;

/**
 * A validated NodePublishVolume request.
 *
 * @param podUid the UID of the pod the volume is published to (the kubelet's pod info on mount),
 *     empty when the caller gave none; the volume's IO limits are applied to that pod
 */
public record PublishRequest(
    String volumeId,
    Path stagingPath,
    Path targetPath,
    boolean readOnly,
    AccessType accessType,
    List<String> mountFlags,
    String podUid) {
  /** A publication for no pod in particular (no IO limits apply). */
  public PublishRequest(
      String volumeId,
      Path stagingPath,
      Path targetPath,
      boolean readOnly,
      AccessType accessType,
      List<String> mountFlags) {
    this(volumeId, stagingPath, targetPath, readOnly, accessType, mountFlags, "");
  }
}

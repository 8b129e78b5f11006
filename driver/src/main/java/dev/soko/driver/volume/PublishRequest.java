package dev.soko.driver.volume;

import java.nio.file.Path;
import java.util.List;

/** A validated NodePublishVolume request. */
public record PublishRequest(
    String volumeId,
    Path stagingPath,
    Path targetPath,
    boolean readOnly,
    AccessType accessType,
    List<String> mountFlags) {}

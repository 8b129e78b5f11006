package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;
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

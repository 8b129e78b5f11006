package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;
import java.nio.file.Path;
import java.util.List;

/** A validated NodeStageVolume request. {@code mountFlags} are already allow-listed. */
public record StageRequest(
    String volumeId,
    Path stagingPath,
    AccessType accessType,
    String fsType,
    List<String> mountFlags) {}

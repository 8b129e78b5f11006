package dev.soko.driver.mount;

import java.nio.file.Path;

/**
 * An attached loop device and the file behind it.
 *
 * @param backingFileDeleted the kernel marks the file "(deleted)" when it was removed while
 *     attached
 */
public record LoopDevice(String device, Path backingFile, boolean backingFileDeleted) {}

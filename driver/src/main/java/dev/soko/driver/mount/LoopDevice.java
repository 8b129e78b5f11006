package dev.soko.driver.mount;

import java.nio.file.Path;

/**
 * An attached loop device and the file behind it, as the kernel names it: the path the file was
 * opened by, or relative to its mount when that mount is no longer reachable from here. {@link
 * LoopDevices#backedBy} tells which file it is.
 *
 * @param backingFileDeleted the kernel marks the file "(deleted)" when it was removed while
 *     attached
 */
public record LoopDevice(String device, Path backingFile, boolean backingFileDeleted) {}

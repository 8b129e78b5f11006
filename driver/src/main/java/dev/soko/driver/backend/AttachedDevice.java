package dev.soko.driver.backend;

import java.nio.file.Path;

/**
 * A block device a backend attached, and the storage behind it as the host names it: what recovery
 * and health read from {@link BlockDevices#inventory}, whatever attaches the device (a loop device
 * over an image file, a logical volume, a zvol).
 *
 * @param device the device's path, which mount entries name
 * @param backing the storage's location as the host reports it, which {@link BlockDevices#backedBy}
 *     matches against a volume's location
 * @param backingDeleted the host says the storage was removed while the device held it
 */
public record AttachedDevice(String device, Path backing, boolean backingDeleted) {}

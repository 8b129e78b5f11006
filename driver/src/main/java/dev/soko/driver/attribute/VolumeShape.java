package dev.soko.driver.attribute;

import dev.soko.driver.model.AccessType;

/**
 * What an attribute kind may check a volume against: where it lives and what it is. Traits, never a
 * backend's class: a kind asks "has the volume a block device of its own", not "which backend".
 *
 * @param pool the pool's name, for messages
 * @param backend the pool's backend as its flag names it, for messages
 * @param ownBlockDevice whether the volume is attached as a block device of its own on the node (an
 *     image file's loop device), rather than sharing the pool's device
 * @param fsType the volume's filesystem; empty for a block volume
 */
public record VolumeShape(
    String pool, String backend, boolean ownBlockDevice, AccessType accessType, String fsType) {}

package dev.soko.driver.backend;

/**
 * One backend, as the engine sees it: its storage ({@link VolumeStorage}), what it can serve
 * ({@link StorageTraits}) and how the node side presents its volumes ({@link NodeSide}). The volume
 * layer (provisioning, staging, expansion, recovery) decides what to do and keeps the records; a
 * backend only does it, and the volume layer never asks which backend it has. Each pool has one
 * backend ({@link Backends}, chosen by the pool's configuration). Image files are attached as block
 * devices ({@link BlockDevices}), which the volume layer formats and mounts; btrfs subvolumes are
 * directories ({@link DirectoryVolumes}), bind-mounted and never attached. An LVM or raw-partition
 * backend is of the first kind, a ZFS dataset one of the second.
 */
public interface VolumeBackend extends VolumeStorage {

  StorageTraits traits();

  NodeSide nodeSide();
}

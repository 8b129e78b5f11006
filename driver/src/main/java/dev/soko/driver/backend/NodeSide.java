package dev.soko.driver.backend;

/**
 * How the node side hands a backend's volumes to workloads: as block devices that it attaches,
 * formats and mounts ({@link BlockDevices}), or as directories that it bind-mounts ({@link
 * DirectoryVolumes}). The volume layer keeps one presentation for each kind; a new backend picks
 * one by what it returns here and needs no change there.
 */
public sealed interface NodeSide permits BlockDevices, DirectoryVolumes {}

package dev.soko.driver.backend;

/**
 * How a volume's or snapshot's content travels to another node, which follows from what its storage
 * is: the image of a block device is sent as its allocated ranges, a directory of the pool's own
 * filesystem (a btrfs subvolume) as its tree of files. A copy lands only in a pool whose volumes
 * have the same form: an image would need a filesystem mounted to become a tree, a tree a device
 * formatted to become an image, which a CreateVolume does not do.
 */
public enum CopyForm {
  IMAGE,
  FILE_TREE
}

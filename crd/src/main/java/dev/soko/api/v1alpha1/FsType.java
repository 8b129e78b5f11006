package dev.soko.api.v1alpha1;

/**
 * Filesystems of volumes. ext4 and xfs are made by the driver inside an ImageFile pool's images;
 * btrfs is the pool's own filesystem, which a BtrfsSubvolume pool's volumes share (the CRD's rules
 * keep each to its backend).
 */
public enum FsType {
  ext4,
  xfs,
  btrfs
}

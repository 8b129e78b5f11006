package dev.soko.api.v1alpha1;

/** How a pool stores its volumes; see {@link PoolSpec#getBackend()} for what each needs. */
public enum PoolBackend {
  /** A sparse image file per volume, attached through a loop device, formatted ext4 or xfs. */
  ImageFile,
  /** A btrfs subvolume per volume, its capacity a qgroup limit, bind-mounted: no loop device. */
  BtrfsSubvolume
}

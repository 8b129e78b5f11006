package dev.soko.driver.model;

/** How a volume is presented to a workload. */
public enum AccessType {
  /** A filesystem (ext4 or xfs) mounted at the target directory. */
  FILESYSTEM,
  /** The raw loop device, bind-mounted at the target file. */
  BLOCK
}

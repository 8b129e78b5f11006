package dev.soko.api.v1alpha1;

/** Filesystems the driver can create inside a volume. */
public enum FsType {
  ext4,
  xfs
}

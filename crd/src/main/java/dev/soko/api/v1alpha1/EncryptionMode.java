package dev.soko.api.v1alpha1;

/** How a storage class's volumes are encrypted at rest; see {@link EncryptionSpec#getMode()}. */
public enum EncryptionMode {
  /** The kernel's filesystem encryption (v2 policy) on the volume's own ext4 filesystem. */
  fscrypt
}

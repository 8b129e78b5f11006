package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;

/**
 * Encryption at rest of a storage class's volumes, with a key per claim from a Secret. Neither
 * field has a schema default (an older CRD must still accept what this one stored); the operator
 * fills in the key Secret's defaults when it renders the class.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class EncryptionSpec {
  @JsonPropertyDescription(
      "How volumes are encrypted. fscrypt: the kernel's filesystem encryption (v2 policy,"
          + " AES-256-XTS for contents, AES-256-CTS for names) on the volume's ext4 filesystem,"
          + " so ext4 filesystem volumes of ImageFile pools only: an xfs volume, a BtrfsSubvolume"
          + " pool's and a block volume would need dm-crypt, which the driver does not use. The"
          + " class gets fsType ext4, and a block-mode claim on it fails at provisioning"
          + " (InvalidArgument).")
  @Required
  private EncryptionMode mode;

  @JsonPropertyDescription(
      "The Secret that holds each volume's key (field encryptionKey, 64 random bytes as base64),"
          + " read by the kubelet when a pod starts on the volume. Unset: each claim's own Secret,"
          + " named after the claim with '-key' appended, in the claim's namespace. Deleting the"
          + " Secret makes the volume's data unreadable.")
  private KeySecretSpec keySecret;

  public EncryptionMode getMode() {
    return mode;
  }

  public void setMode(EncryptionMode mode) {
    this.mode = mode;
  }

  public KeySecretSpec getKeySecret() {
    return keySecret;
  }

  public void setKeySecret(KeySecretSpec keySecret) {
    this.keySecret = keySecret;
  }
}

package dev.soko.driver.encryption;

import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.attribute.NodeSecrets;
import java.util.Arrays;
import java.util.Base64;
import java.util.function.Function;

/**
 * A volume's encryption key, from its node-stage Secret: field {@link #SECRET_FIELD}, the base64
 * text (standard alphabet, padded) of 64 random bytes, the two 256-bit keys of AES-256-XTS. Text
 * because CSI secrets are protobuf strings, which must be UTF-8. Refusals name the field, never its
 * content, and nothing here shows the key.
 */
final class EncryptionKey {
  /** The node-stage Secret's field that holds the key. */
  static final String SECRET_FIELD = "encryptionKey";

  private final byte[] raw;

  private EncryptionKey(byte[] raw) {
    this.raw = raw;
  }

  /**
   * The key in {@code secrets}.
   *
   * @throws AttributeException (not ready) when the field is missing or does not hold 64 bytes in
   *     base64
   */
  static EncryptionKey from(NodeSecrets secrets, String volumeId) {
    String text =
        secrets
            .field(SECRET_FIELD)
            .orElseThrow(
                () ->
                    notReady(
                        "volume %s is encrypted and its node-stage Secret %s: the StorageClass must"
                            + " name a Secret with field %s (parameters"
                            + " csi.storage.k8s.io/node-stage-secret-name and -namespace)",
                        volumeId,
                        secrets.isEmpty() ? "was not given" : "has no field " + SECRET_FIELD,
                        SECRET_FIELD));
    byte[] raw;
    try {
      raw = Base64.getDecoder().decode(text.strip());
    } catch (IllegalArgumentException e) {
      throw notReady(
          "the node-stage Secret's field %s of volume %s is not base64 text (the key must be 64"
              + " random bytes, base64-encoded)",
          SECRET_FIELD, volumeId);
    }
    if (raw.length != FscryptArgs.KEY_BYTES) {
      int length = raw.length;
      Arrays.fill(raw, (byte) 0);
      throw notReady(
          "the node-stage Secret's field %s of volume %s holds %d bytes; an AES-256-XTS key is"
              + " %d bytes, base64-encoded",
          SECRET_FIELD, volumeId, length, FscryptArgs.KEY_BYTES);
    }
    return new EncryptionKey(raw);
  }

  /** What {@code use} makes of the raw key; the key itself stays here. */
  <T> T withRaw(Function<byte[], T> use) {
    return use.apply(raw);
  }

  /** Overwrites the key in memory; it is unusable afterwards. */
  void wipe() {
    Arrays.fill(raw, (byte) 0);
  }

  @Override
  public String toString() {
    return "EncryptionKey[hidden]";
  }

  private static AttributeException notReady(String format, Object... args) {
    return new AttributeException(AttributeException.Kind.NOT_READY, String.format(format, args));
  }
}

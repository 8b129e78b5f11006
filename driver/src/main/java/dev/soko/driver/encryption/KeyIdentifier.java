package dev.soko.driver.encryption;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * The kernel's name for a v2 policy's key: a hash of the key (HKDF-SHA512), which the policy holds
 * and the keyring answers when the key is added. It says which key, never what the key is, so it
 * may be logged.
 */
record KeyIdentifier(byte[] bytes) {
  KeyIdentifier {
    bytes = bytes.clone();
  }

  @Override
  public byte[] bytes() {
    return bytes.clone();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof KeyIdentifier k && Arrays.equals(bytes, k.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return HexFormat.of().formatHex(bytes);
  }
}

package dev.soko.driver.encryption;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The argument structures of the fscrypt ioctls (linux/fscrypt.h), laid out as the kernel reads
 * them on LP64 Linux (x86-64 and arm64 alike), in native byte order. One builder or reader per
 * structure, so that a unit test can check each byte layout.
 */
final class FscryptArgs {
  /** FS_IOC_SET_ENCRYPTION_POLICY: _IOR('f', 19, struct fscrypt_policy_v1). */
  static final long IOC_SET_POLICY = 0x800C6613L;

  /** FS_IOC_GET_ENCRYPTION_POLICY_EX: _IOWR('f', 22, __u8[9]). */
  static final long IOC_GET_POLICY_EX = 0xC0096616L;

  /** FS_IOC_ADD_ENCRYPTION_KEY: _IOWR('f', 23, struct fscrypt_add_key_arg), 80 bytes. */
  static final long IOC_ADD_KEY = 0xC0506617L;

  /** FS_IOC_REMOVE_ENCRYPTION_KEY: _IOWR('f', 24, struct fscrypt_remove_key_arg), 64 bytes. */
  static final long IOC_REMOVE_KEY = 0xC0406618L;

  /** FSCRYPT_KEY_IDENTIFIER_SIZE. */
  static final int IDENTIFIER_BYTES = 16;

  /** FSCRYPT_MAX_KEY_SIZE, and what AES-256-XTS takes: two 256-bit keys. */
  static final int KEY_BYTES = 64;

  static final int POLICY_V2 = 2;
  static final int MODE_AES_256_XTS = 1;
  static final int MODE_AES_256_CTS = 4;

  /** FSCRYPT_POLICY_FLAGS_PAD_32: file names padded to 32 bytes, which hides their length best. */
  static final int FLAGS_PAD_32 = 0x03;

  /** FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER: a v2 policy's key, named by its identifier. */
  static final int KEY_SPEC_TYPE_IDENTIFIER = 2;

  /** sizeof(struct fscrypt_policy_v2). */
  static final int POLICY_V2_BYTES = 24;

  /** sizeof(struct fscrypt_add_key_arg), after which the raw key follows. */
  private static final int ADD_KEY_BYTES = 80;

  /** Offset of the identifier in struct fscrypt_key_specifier (after __u32 type, __reserved). */
  private static final int SPEC_IDENTIFIER = 8;

  /** Offset of raw_size in struct fscrypt_add_key_arg. */
  private static final int ADD_KEY_RAW_SIZE = 40;

  /** Offset of removal_status_flags in struct fscrypt_remove_key_arg. */
  static final int REMOVE_STATUS_FLAGS = 40;

  private FscryptArgs() {}

  /**
   * struct fscrypt_add_key_arg for a key of type IDENTIFIER (the kernel fills the identifier in),
   * followed by the raw key. The caller wipes the array after the call.
   */
  static byte[] addKey(byte[] raw) {
    byte[] args = new byte[ADD_KEY_BYTES + raw.length];
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    b.putInt(0, KEY_SPEC_TYPE_IDENTIFIER);
    b.putInt(ADD_KEY_RAW_SIZE, raw.length);
    System.arraycopy(raw, 0, args, ADD_KEY_BYTES, raw.length);
    return args;
  }

  /** The identifier the kernel wrote into an {@link #addKey} argument. */
  static byte[] addedIdentifier(byte[] args) {
    return Arrays.copyOfRange(args, SPEC_IDENTIFIER, SPEC_IDENTIFIER + IDENTIFIER_BYTES);
  }

  /** struct fscrypt_remove_key_arg naming the key by its identifier. */
  static byte[] removeKey(byte[] identifier) {
    byte[] args = new byte[64];
    ByteBuffer.wrap(args).order(ByteOrder.nativeOrder()).putInt(0, KEY_SPEC_TYPE_IDENTIFIER);
    System.arraycopy(identifier, 0, args, SPEC_IDENTIFIER, IDENTIFIER_BYTES);
    return args;
  }

  /** The removal_status_flags the kernel wrote into a {@link #removeKey} argument. */
  static int removalStatus(byte[] args) {
    return ByteBuffer.wrap(args).order(ByteOrder.nativeOrder()).getInt(REMOVE_STATUS_FLAGS);
  }

  /** struct fscrypt_policy_v2: AES-256-XTS contents, AES-256-CTS names, 32-byte name padding. */
  static byte[] policyV2(byte[] identifier) {
    byte[] policy = new byte[POLICY_V2_BYTES];
    policy[0] = POLICY_V2;
    policy[1] = MODE_AES_256_XTS;
    policy[2] = MODE_AES_256_CTS;
    policy[3] = FLAGS_PAD_32;
    System.arraycopy(identifier, 0, policy, 8, IDENTIFIER_BYTES);
    return policy;
  }

  /** struct fscrypt_get_policy_ex_arg with room for a v2 policy: __u64 policy_size, the policy. */
  static byte[] getPolicyEx() {
    byte[] args = new byte[8 + POLICY_V2_BYTES];
    ByteBuffer.wrap(args).order(ByteOrder.nativeOrder()).putLong(0, POLICY_V2_BYTES);
    return args;
  }

  /** The policy a {@link #getPolicyEx} argument holds after the call. */
  static byte[] policyIn(byte[] args) {
    return Arrays.copyOfRange(args, 8, 8 + POLICY_V2_BYTES);
  }

  /** The policy's version byte (1 or 2). */
  static int version(byte[] policy) {
    return policy[0];
  }

  /** A v2 policy's master_key_identifier. */
  static byte[] identifierOf(byte[] policy) {
    return Arrays.copyOfRange(policy, 8, 8 + IDENTIFIER_BYTES);
  }
}

package dev.soko.driver.encryption;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The fscrypt ioctl structures, byte by byte, as linux/fscrypt.h lays them out on LP64. */
class FscryptArgsTest {
  private static final byte[] IDENTIFIER = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

  @Test
  void ioctlNumbersEncodeDirectionSizeTypeAndNumber() {
    // _IOC(dir, 'f', nr, size): dir << 30 | size << 16 | 'f' << 8 | nr; _IOR reads (2), _IOWR 3
    assertThat(FscryptArgs.IOC_SET_POLICY).isEqualTo(2L << 30 | 12L << 16 | 0x66 << 8 | 19);
    assertThat(FscryptArgs.IOC_GET_POLICY_EX).isEqualTo(3L << 30 | 9L << 16 | 0x66 << 8 | 22);
    assertThat(FscryptArgs.IOC_ADD_KEY).isEqualTo(3L << 30 | 80L << 16 | 0x66 << 8 | 23);
    assertThat(FscryptArgs.IOC_REMOVE_KEY).isEqualTo(3L << 30 | 64L << 16 | 0x66 << 8 | 24);
  }

  @Test
  void addKeyIsAnIdentifierSpecifierThenTheRawSizeThenTheKeyAfter80Bytes() {
    byte[] raw = new byte[64];
    raw[0] = 42;
    raw[63] = 43;
    byte[] args = FscryptArgs.addKey(raw);
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    assertThat(args).hasSize(144);
    assertThat(b.getInt(0)).isEqualTo(2); // FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER
    assertThat(b.getInt(40)).isEqualTo(64); // raw_size
    assertThat(b.getInt(44)).isZero(); // key_id: the raw key is given, not a keyring key
    assertThat(args[80]).isEqualTo((byte) 42);
    assertThat(args[143]).isEqualTo((byte) 43);

    System.arraycopy(IDENTIFIER, 0, args, 8, 16); // as the kernel answers
    assertThat(FscryptArgs.addedIdentifier(args)).isEqualTo(IDENTIFIER);
  }

  @Test
  void removeKeyNamesTheIdentifierAndReadsTheStatusAt40() {
    byte[] args = FscryptArgs.removeKey(IDENTIFIER);
    ByteBuffer b = ByteBuffer.wrap(args).order(ByteOrder.nativeOrder());
    assertThat(args).hasSize(64);
    assertThat(b.getInt(0)).isEqualTo(2);
    assertThat(java.util.Arrays.copyOfRange(args, 8, 24)).isEqualTo(IDENTIFIER);
    b.putInt(40, Fscrypt.FILES_BUSY);
    assertThat(FscryptArgs.removalStatus(args)).isEqualTo(Fscrypt.FILES_BUSY);
  }

  @Test
  void aV2PolicyIsAes256XtsWithCtsNamesPaddedTo32() {
    byte[] policy = FscryptArgs.policyV2(IDENTIFIER);
    assertThat(policy).hasSize(24);
    assertThat(java.util.Arrays.copyOf(policy, 8)).containsExactly(2, 1, 4, 3, 0, 0, 0, 0);
    assertThat(FscryptArgs.identifierOf(policy)).isEqualTo(IDENTIFIER);

    byte[] get = FscryptArgs.getPolicyEx();
    assertThat(ByteBuffer.wrap(get).order(ByteOrder.nativeOrder()).getLong(0)).isEqualTo(24);
    System.arraycopy(policy, 0, get, 8, 24);
    assertThat(FscryptArgs.version(FscryptArgs.policyIn(get))).isEqualTo(2);
    assertThat(FscryptArgs.identifierOf(FscryptArgs.policyIn(get))).isEqualTo(IDENTIFIER);
  }
}

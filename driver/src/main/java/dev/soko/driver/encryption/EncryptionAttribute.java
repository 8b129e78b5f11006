package dev.soko.driver.encryption;

import dev.soko.driver.attribute.AttributeEffects;
import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.attribute.AttributeKey;
import dev.soko.driver.attribute.AttributeKind;
import dev.soko.driver.attribute.NodeSecrets;
import dev.soko.driver.attribute.VolumeShape;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.sys.Syscalls;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Encryption at rest as a kind of volume attribute: StorageClass parameter {@value #PARAMETER} with
 * value {@value #FSCRYPT}, the kernel's filesystem encryption (fscrypt, v2 policy) on an ext4
 * volume of an image-file pool. The filesystem is made with ext4's {@code encrypt} feature and pods
 * see its directory {@value #DIRECTORY} (the root holds lost+found, and a policy is set on an empty
 * directory only), encrypted with the key of the volume's node-stage Secret ({@link EncryptionKey},
 * applied by {@link Unlocking}). Other volumes cannot have it: fscrypt encrypts files, so a block
 * volume, xfs (which has no fscrypt here) and a btrfs subvolume would need dm-crypt. A copy (clone,
 * restore) keeps its source's encryption, since its bytes are its source's.
 */
public final class EncryptionAttribute implements AttributeKind {
  /** The StorageClass parameter that asks for encryption. */
  public static final String PARAMETER = "encryption";

  /** Its one value. */
  public static final String FSCRYPT = "fscrypt";

  /** The directory of the volume's filesystem that pods see, encrypted. */
  static final String DIRECTORY = "data";

  private static final String WHY_NOT =
      "fscrypt encrypts the files of an ext4 filesystem; encrypting it would need dm-crypt, which"
          + " this driver does not use";

  private final Unlocking unlocking;

  public EncryptionAttribute(Syscalls syscalls) {
    this.unlocking = new Unlocking(new Fscrypt(syscalls), DIRECTORY);
  }

  @Override
  public String name() {
    return "encryption";
  }

  @Override
  public List<AttributeKey> keys() {
    return List.of(AttributeKey.classParameter(PARAMETER));
  }

  @Override
  public void admit(VolumeShape volume) {
    if (volume.accessType() == AccessType.BLOCK) {
      throw AttributeException.refused("a block volume cannot be encrypted: %s", WHY_NOT);
    }
    if (!volume.ownBlockDevice()) {
      throw AttributeException.refused(
          "the volumes of pool %s (%s) cannot be encrypted: they share the pool's filesystem, and"
              + " %s",
          volume.pool(), volume.backend(), WHY_NOT);
    }
    if (!"ext4".equals(volume.fsType())) {
      throw AttributeException.refused(
          "a volume with filesystem %s cannot be encrypted: %s", volume.fsType(), WHY_NOT);
    }
  }

  @Override
  public Map<String, String> check(Map<String, String> given, VolumeShape volume) {
    String value = given.get(PARAMETER);
    if (!FSCRYPT.equals(value)) {
      throw AttributeException.refused(
          "%s must be %s (the only kind of encryption there is), not \"%s\"",
          PARAMETER, FSCRYPT, value);
    }
    return given;
  }

  @Override
  public List<String> filesystemFeatures(Map<String, String> values) {
    return encrypted(values) ? List.of("encrypt") : List.of();
  }

  @Override
  public Optional<String> presentedDirectory(Map<String, String> values) {
    return encrypted(values) ? Optional.of(DIRECTORY) : Optional.empty();
  }

  /** The key is in the mounted filesystem's keyring, and goes with its last unmount. */
  @Override
  public boolean mountHoldsState(Map<String, String> values) {
    return encrypted(values);
  }

  /** A copy holds its source's encrypted bytes: it is encrypted as its source is, or refused. */
  @Override
  public Map<String, String> copied(Map<String, String> source, Map<String, String> requested) {
    if (encrypted(source)) {
      return source;
    }
    if (encrypted(requested)) {
      throw AttributeException.refused(
          "a copy of a volume that is not encrypted cannot be encrypted: its filesystem was made"
              + " without encryption (StorageClass parameter %s)",
          PARAMETER);
    }
    return requested;
  }

  @Override
  public Optional<AttributeEffects> effects() {
    return Optional.of(unlocking);
  }

  static boolean encrypted(Map<String, String> values) {
    return FSCRYPT.equals(values.get(PARAMETER));
  }

  /** For messages and tests: the field of the node-stage Secret that holds the key. */
  public static String secretField() {
    return EncryptionKey.SECRET_FIELD;
  }

  /** Whether {@code secrets} would unlock a volume, as far as can be told without the volume. */
  static void checkSecrets(NodeSecrets secrets, String volumeId) {
    EncryptionKey.from(secrets, volumeId).wipe();
  }
}

package dev.soko.driver.encryption;

import dev.soko.driver.attribute.AttributeEffects;
import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.attribute.NodeSecrets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What encryption does on the node. Before a stage, the node-stage Secret's key is checked (so a
 * missing or malformed one changes nothing); once the filesystem is mounted, the key is added to
 * its keyring, at every stage (the keyring goes with the mount); the first stage makes the
 * presented directory and sets its v2 policy, later ones compare the key's identifier with the
 * policy's and refuse another key (its files would read as garbage names and fail to open). Before
 * unstage the key is removed, so the mount's cached plaintext goes with it.
 */
final class Unlocking implements AttributeEffects {
  private static final Logger LOG = LoggerFactory.getLogger(Unlocking.class);

  private final Fscrypt fscrypt;
  private final String directory;

  Unlocking(Fscrypt fscrypt, String directory) {
    this.fscrypt = fscrypt;
    this.directory = directory;
  }

  @Override
  public void staging(String volumeId, Map<String, String> values, NodeSecrets secrets) {
    if (EncryptionAttribute.encrypted(values)) {
      EncryptionAttribute.checkSecrets(secrets, volumeId);
    }
  }

  @Override
  public void staged(
      String volumeId, Path stagingPath, Map<String, String> values, NodeSecrets secrets) {
    if (!EncryptionAttribute.encrypted(values)) {
      return;
    }
    EncryptionKey key = EncryptionKey.from(secrets, volumeId);
    KeyIdentifier added;
    try {
      added = fscrypt.addKey(stagingPath, key);
    } finally {
      key.wipe();
    }
    Path presented = stagingPath.resolve(directory);
    Optional<KeyIdentifier> policy = policyOf(volumeId, presented, added, stagingPath);
    if (policy.isEmpty()) {
      fscrypt.setPolicy(presented, added);
      LOG.info("volume {}: directory {} encrypted with key {}", volumeId, directory, added);
    } else if (!policy.get().equals(added)) {
      throw refusal(
          volumeId,
          stagingPath,
          added,
          String.format(
              "the key in the node-stage Secret's field %s is not the key volume %s was encrypted"
                  + " with (key identifier %s, the volume's is %s)",
              EncryptionKey.SECRET_FIELD, volumeId, added, policy.get()));
    } else {
      LOG.info("volume {}: key {} added", volumeId, added);
    }
  }

  /**
   * The policy of the presented directory, which is made when missing; empty when it has none yet
   * (the first stage, or one cut short before its policy was set), which needs it to be empty.
   */
  private Optional<KeyIdentifier> policyOf(
      String volumeId, Path presented, KeyIdentifier added, Path stagingPath) {
    try {
      if (!Files.isDirectory(presented, LinkOption.NOFOLLOW_LINKS)) {
        Files.createDirectory(presented);
        Files.setPosixFilePermissions(
            presented, Files.getPosixFilePermissions(stagingPath, LinkOption.NOFOLLOW_LINKS));
      }
      Optional<KeyIdentifier> policy = fscrypt.policyKey(presented);
      if (policy.isEmpty() && !empty(presented)) {
        throw refusal(
            volumeId,
            stagingPath,
            added,
            String.format(
                "volume %s's directory %s holds files that are not encrypted; refusing to stage it"
                    + " as an encrypted volume",
                volumeId, directory));
      }
      return policy;
    } catch (IOException e) {
      removeQuietly(volumeId, stagingPath, added);
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A stage this volume's key cannot serve: the key just added leaves the keyring first, so a
   * refused stage unlocks nothing, and the caller is told to retry once the Secret or the volume is
   * right.
   */
  private AttributeException refusal(
      String volumeId, Path stagingPath, KeyIdentifier added, String message) {
    removeQuietly(volumeId, stagingPath, added);
    return new AttributeException(AttributeException.Kind.NOT_READY, message);
  }

  private static boolean empty(Path dir) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.findAny().isEmpty();
    }
  }

  @Override
  public void unstaging(String volumeId, Path stagingPath, Map<String, String> values) {
    if (!EncryptionAttribute.encrypted(values)) {
      return;
    }
    try {
      Optional<KeyIdentifier> policy = fscrypt.policyKey(stagingPath.resolve(directory));
      policy.ifPresent(identifier -> remove(volumeId, stagingPath, identifier));
    } catch (RuntimeException e) {
      // The keyring goes with the filesystem's last mount anyway; the unstage goes on.
      LOG.warn("volume {}: cannot remove its key before unmounting: {}", volumeId, e.toString());
    }
  }

  private void remove(String volumeId, Path stagingPath, KeyIdentifier identifier) {
    int status = fscrypt.removeKey(stagingPath, identifier);
    if ((status & Fscrypt.FILES_BUSY) != 0) {
      LOG.warn(
          "volume {}: key {} removed, but files still open keep it in use", volumeId, identifier);
    } else {
      LOG.info("volume {}: key {} removed", volumeId, identifier);
    }
  }

  private void removeQuietly(String volumeId, Path stagingPath, KeyIdentifier identifier) {
    try {
      fscrypt.removeKey(stagingPath, identifier);
    } catch (RuntimeException e) {
      LOG.warn("volume {}: cannot remove key {}: {}", volumeId, identifier, e.toString());
    }
  }
}

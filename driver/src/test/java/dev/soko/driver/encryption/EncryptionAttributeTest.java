package dev.soko.driver.encryption;

import static dev.soko.driver.attribute.AttributeSource.CLASS_PARAMETERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.attribute.AttributeRegistry;
import dev.soko.driver.attribute.NodeSecrets;
import dev.soko.driver.attribute.VolumeShape;
import dev.soko.driver.iolimit.IoLimitAttribute;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.sys.FakeSyscalls;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The encryption parameter as the engine checks it through the registry, and the key as it is read
 * from the node-stage secrets: what is refused, with which kind and words, and that no refusal
 * shows the key.
 */
class EncryptionAttributeTest {
  static final VolumeShape EXT4 =
      new VolumeShape("img", "image-file", true, AccessType.FILESYSTEM, "ext4");
  static final VolumeShape XFS =
      new VolumeShape("img", "image-file", true, AccessType.FILESYSTEM, "xfs");
  static final VolumeShape BLOCK = new VolumeShape("img", "image-file", true, AccessType.BLOCK, "");
  static final VolumeShape SUBVOLUME =
      new VolumeShape("fast", "btrfs-subvolume", false, AccessType.FILESYSTEM, "btrfs");
  static final Map<String, String> ENCRYPTED = Map.of("encryption", "fscrypt");

  final AttributeRegistry registry =
      AttributeRegistry.of(new IoLimitAttribute(), new EncryptionAttribute(new FakeSyscalls()));

  @Test
  void anExt4VolumeOfAnImageFilePoolCanBeEncrypted() {
    assertThat(
            registry.check(CLASS_PARAMETERS, Map.of("encryption", "fscrypt", "pool", "img"), EXT4))
        .containsExactly(Map.entry("encryption", "fscrypt"));
    assertThat(registry.keys(CLASS_PARAMETERS)).containsExactly("encryption");
    assertThat(registry.filesystemFeatures(ENCRYPTED)).containsExactly("encrypt");
    assertThat(registry.presentedDirectory(ENCRYPTED)).contains("data");
    assertThat(registry.filesystemFeatures(Map.of("pool", "img"))).isEmpty();
    assertThat(registry.presentedDirectory(Map.of())).isEmpty();
  }

  @Test
  void xfsBlockAndSubvolumesAreRefusedSayingDmCryptWouldBeNeeded() {
    for (VolumeShape shape : List.of(XFS, BLOCK, SUBVOLUME)) {
      assertThatThrownBy(() -> registry.check(CLASS_PARAMETERS, ENCRYPTED, shape))
          .as(shape.toString())
          .isInstanceOfSatisfying(
              AttributeException.class,
              e -> assertThat(e.kind()).isEqualTo(AttributeException.Kind.REFUSED))
          .hasMessageContaining("cannot be encrypted")
          .hasMessageContaining("dm-crypt");
    }
    assertThatThrownBy(() -> registry.check(CLASS_PARAMETERS, ENCRYPTED, SUBVOLUME))
        .hasMessageContaining("pool fast (btrfs-subvolume)");
    assertThatThrownBy(() -> registry.check(CLASS_PARAMETERS, ENCRYPTED, XFS))
        .hasMessageContaining("filesystem xfs");
  }

  @Test
  void anotherValueIsRefused() {
    assertThatThrownBy(() -> registry.check(CLASS_PARAMETERS, Map.of("encryption", "luks"), EXT4))
        .isInstanceOf(AttributeException.class)
        .hasMessage(
            "encryption must be fscrypt (the only kind of encryption there is), not \"luks\"");
  }

  @Test
  void aCopyKeepsItsSourcesEncryptionAndAPlainSourceCannotBecomeEncrypted() {
    assertThat(registry.copied(ENCRYPTED, Map.of("pool", "img")))
        .containsExactlyInAnyOrderEntriesOf(Map.of("pool", "img", "encryption", "fscrypt"));
    assertThat(registry.copied(ENCRYPTED, ENCRYPTED)).isEqualTo(ENCRYPTED);
    assertThat(registry.copied(Map.of(), Map.of("pool", "img"))).isEqualTo(Map.of("pool", "img"));
    assertThatThrownBy(() -> registry.copied(Map.of("pool", "img"), ENCRYPTED))
        .isInstanceOf(AttributeException.class)
        .hasMessageContaining("not encrypted cannot be encrypted");
  }

  @Test
  void theKeyIs64BytesOfBase64AndEveryRefusalNamesTheFieldNotTheValue() {
    byte[] raw = new byte[64];
    raw[0] = 7;
    String text = Base64.getEncoder().encodeToString(raw);
    EncryptionKey key = EncryptionKey.from(secrets(text), "vol-1");
    assertThat(key.<byte[]>withRaw(byte[]::clone)).isEqualTo(raw);
    assertThat(key.toString()).doesNotContain(text);
    key.wipe();
    assertThat(key.<byte[]>withRaw(byte[]::clone)).isEqualTo(new byte[64]);

    notReady(NodeSecrets.none(), "Secret was not given", "field encryptionKey");
    notReady(NodeSecrets.of(Map.of("password", "hunter2-secret")), "has no field encryptionKey");
    notReady(secrets("!!not base64 at all!!"), "field encryptionKey", "is not base64");
    notReady(
        secrets(Base64.getEncoder().encodeToString(new byte[32])),
        "holds 32 bytes; an AES-256-XTS key is 64 bytes");
    notReady(secrets(HexFormatted.of(raw)), "field encryptionKey");
  }

  @Test
  void secretsShowTheirFieldNamesOnly() {
    NodeSecrets secrets = NodeSecrets.of(Map.of("encryptionKey", "c2VjcmV0", "b", "other"));
    assertThat(secrets.toString()).isEqualTo("NodeSecrets[b, encryptionKey]");
    assertThat(secrets.field("encryptionKey")).isEqualTo(Optional.of("c2VjcmV0"));
  }

  @Test
  void stagingAVolumeWithoutEncryptionNeedsNoSecret() {
    registry.staging("vol-1", Map.of("pool", "img"), NodeSecrets.none());
    assertThatThrownBy(() -> registry.staging("vol-1", ENCRYPTED, NodeSecrets.none()))
        .isInstanceOfSatisfying(
            AttributeException.class,
            e -> assertThat(e.kind()).isEqualTo(AttributeException.Kind.NOT_READY));
  }

  private static NodeSecrets secrets(String key) {
    return NodeSecrets.of(Map.of("encryptionKey", key));
  }

  private static void notReady(NodeSecrets secrets, String... says) {
    assertThatThrownBy(() -> EncryptionKey.from(secrets, "vol-1"))
        .isInstanceOfSatisfying(
            AttributeException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(AttributeException.Kind.NOT_READY);
              assertThat(e.getMessage()).contains(says).contains("vol-1");
              secrets
                  .field("encryptionKey")
                  .ifPresent(v -> assertThat(e.getMessage()).doesNotContain(v));
              secrets
                  .field("password")
                  .ifPresent(v -> assertThat(e.getMessage()).doesNotContain(v));
            });
  }

  /** Hex is not the encoding: 128 hex digits decode as base64 to 96 bytes, and are refused. */
  private static final class HexFormatted {
    static String of(byte[] raw) {
      return java.util.HexFormat.of().formatHex(raw);
    }
  }
}

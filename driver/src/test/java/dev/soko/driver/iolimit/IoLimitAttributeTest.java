package dev.soko.driver.iolimit;

import static dev.soko.driver.attribute.AttributeSource.MUTABLE_PARAMETERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.attribute.AttributeRegistry;
import dev.soko.driver.attribute.VolumeShape;
import dev.soko.driver.model.AccessType;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * IO limits as the engine checks them through the registry: the answers, word for word, that the
 * engine gave when it checked them itself.
 */
class IoLimitAttributeTest {
  static final VolumeShape LOOP =
      new VolumeShape("xfs", "image-file", true, AccessType.FILESYSTEM, "ext4");
  static final VolumeShape SUBVOLUME =
      new VolumeShape("btrfs", "btrfs-subvolume", false, AccessType.FILESYSTEM, "btrfs");

  final AttributeRegistry registry = AttributeRegistry.of(new IoLimitAttribute());

  @Test
  void limitsAreKeptInPlainNumbersAndMaxIsNotKept() {
    assertThat(
            registry.check(
                MUTABLE_PARAMETERS,
                Map.of("readIOPS", "200", "writeBytesPerSecond", "4Mi", "writeIOPS", "max"),
                LOOP))
        .containsExactly(Map.entry("readIOPS", "200"), Map.entry("writeBytesPerSecond", "4194304"));
  }

  @Test
  void malformedOrUnknownParametersAreRefusedInTheirOwnWords() {
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("readIOPS", "fast"), LOOP))
        .isInstanceOfSatisfying(
            AttributeException.class,
            e -> assertThat(e.kind()).isEqualTo(AttributeException.Kind.REFUSED))
        .hasMessage(
            "readIOPS must be a whole number of operations from 1 to 100000000 or max, not"
                + " \"fast\"");
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("iops", "1"), LOOP))
        .hasMessage(
            "unknown IO limit parameter \"iops\": the known ones are readIOPS, writeIOPS,"
                + " readBytesPerSecond and writeBytesPerSecond");
  }

  @Test
  void aVolumeSharingItsPoolsDeviceCannotHaveLimitsWhateverTheKeys() {
    String shared =
        "IO limits need a block device of the volume's own; the volumes of pool btrfs"
            + " (btrfs-subvolume) share the pool's device";
    assertThatThrownBy(
            () -> registry.check(MUTABLE_PARAMETERS, Map.of("readIOPS", "200"), SUBVOLUME))
        .hasMessage(shared);
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("iops", "1"), SUBVOLUME))
        .hasMessage(shared);
    assertThat(registry.check(MUTABLE_PARAMETERS, Map.of(), SUBVOLUME)).isEmpty();
  }
}

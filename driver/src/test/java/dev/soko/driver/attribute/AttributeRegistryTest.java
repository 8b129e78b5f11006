package dev.soko.driver.attribute;

import static dev.soko.driver.attribute.AttributeSource.CLASS_PARAMETERS;
import static dev.soko.driver.attribute.AttributeSource.MUTABLE_PARAMETERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.testing.ColourAttribute;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Keys routed to the kind that owns them, checked, kept and handed back to each kind alone. */
class AttributeRegistryTest {
  static final VolumeShape EXT4 =
      new VolumeShape("main", "image-file", true, AccessType.FILESYSTEM, "ext4");
  static final VolumeShape BLOCK =
      new VolumeShape("main", "image-file", true, AccessType.BLOCK, "");

  /** A second mutable kind, which takes any whole number and keeps it as given. */
  record Weight() implements AttributeKind {
    @Override
    public String name() {
      return "weight";
    }

    @Override
    public List<AttributeKey> keys() {
      return List.of(AttributeKey.mutableParameter("weight"));
    }

    @Override
    public Map<String, String> check(Map<String, String> given, VolumeShape volume) {
      if (!given.get("weight").matches("[0-9]+")) {
        throw AttributeException.refused("weight must be a whole number");
      }
      return given;
    }
  }

  final ColourAttribute colour = new ColourAttribute();
  final AttributeRegistry registry = AttributeRegistry.of(colour, new Weight());

  @Test
  void eachKeyGoesToItsKindAndTheKeptValuesComeBack() {
    assertThat(registry.keys(CLASS_PARAMETERS)).containsExactly("colour");
    assertThat(registry.keys(MUTABLE_PARAMETERS)).containsExactly("shade", "weight");
    assertThat(registry.check(MUTABLE_PARAMETERS, Map.of("shade", "dark", "weight", "3"), EXT4))
        .isEqualTo(Map.of("shade", "dark", "weight", "3"));
    assertThat(registry.check(MUTABLE_PARAMETERS, Map.of(), BLOCK)).isEmpty();
  }

  @Test
  void ofStorageClassParametersOnlyTheKindsKeysAreLookedAt() {
    // pool, fsType and the provisioner's keys are the driver's own, parsed where they arrive.
    assertThat(
            registry.check(
                CLASS_PARAMETERS,
                Map.of("pool", "main", "csi.storage.k8s.io/pvc/name", "c", "colour", "red"),
                EXT4))
        .isEqualTo(Map.of("colour", "red"));
    assertThatThrownBy(() -> registry.check(CLASS_PARAMETERS, Map.of("colour", "blue"), EXT4))
        .isInstanceOfSatisfying(
            AttributeException.class,
            e -> assertThat(e.kind()).isEqualTo(AttributeException.Kind.REFUSED))
        .hasMessage("colour must be one of [red, green], not blue");
    // A key of one source is not the other's.
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("colour", "red"), EXT4))
        .hasMessage(
            "unknown colour or weight parameter \"colour\": the known ones are shade and weight");
  }

  @Test
  void aKindRefusesAVolumeThatCannotHaveItBeforeItsValuesAreRead() {
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("shade", "pink"), BLOCK))
        .hasMessage("a colour needs a filesystem volume");
    // The other kind does not mind block volumes.
    assertThat(registry.check(MUTABLE_PARAMETERS, Map.of("weight", "1"), BLOCK))
        .containsEntry("weight", "1");
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("weight", "x"), BLOCK))
        .hasMessage("weight must be a whole number");
  }

  @Test
  void anUnknownMutableKeyIsRefusedAfterEveryKindOfItsSourceCheckedTheVolume() {
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("hue", "1"), EXT4))
        .hasMessage(
            "unknown colour or weight parameter \"hue\": the known ones are shade and weight");
    // On a volume that cannot have a colour at all, that is the more useful answer.
    assertThatThrownBy(() -> registry.check(MUTABLE_PARAMETERS, Map.of("hue", "1"), BLOCK))
        .hasMessage("a colour needs a filesystem volume");
    assertThatThrownBy(
            () -> AttributeRegistry.of().check(MUTABLE_PARAMETERS, Map.of("hue", "1"), EXT4))
        .hasMessage("unknown mutable parameter \"hue\": there are none");
  }

  @Test
  void aKeyOwnedByTwoKindsIsAMistakeFoundAtStart() {
    assertThatThrownBy(() -> AttributeRegistry.of(new Weight(), new Weight()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("attribute key weight is both weight's and weight");
  }

  @Test
  void eachActingKindHearsOfItsOwnValuesOnly() {
    Map<String, String> kept =
        Map.of("pool", "main", "colour", "green", "shade", "light", "weight", "2");
    assertThat(registry.acting()).isTrue();
    assertThat(registry.anyIn(kept)).isTrue();
    assertThat(registry.anyIn(Map.of("pool", "main"))).isFalse();

    registry.staged("vol-1", Path.of("/staging"), kept);
    registry.published(
        new Publication("vol-1", Path.of("/target"), "pod-1", Optional.empty()), kept);
    registry.changed("vol-1", Map.of("colour", "green"));
    registry.unpublished("vol-1", Path.of("/target"));
    registry.unstaged("vol-1", Path.of("/staging"));

    assertThat(colour.events)
        .containsExactly(
            "staged vol-1 {colour=green, shade=light}",
            "published vol-1 to pod-1 {colour=green, shade=light}",
            "changed vol-1 {colour=green}",
            "unpublished vol-1",
            "unstaged vol-1");
    assertThat(AttributeRegistry.of(new Weight()).acting()).as("a kind without effects").isFalse();
  }
}

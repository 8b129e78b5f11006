package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.reason;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.attribute.AttributeRegistry;
import dev.soko.driver.iolimit.IoLimitAttribute;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.state.FlatJson;
import dev.soko.driver.testing.ColourAttribute;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume's attributes through the engine, over fake mounts and loop devices: a kind declared
 * outside the engine (a test's, {@link ColourAttribute}) beside IO limits is checked at creation,
 * kept in the volume's record where records have always kept parameters, and hears of stage,
 * publish, modify and their reverses, with nothing in the volume manager naming it. A record
 * written before attributes had a registry reads as a volume without them.
 */
class VolumeAttributesTest {
  @TempDir Path dir;
  EngineFixture f;
  ColourAttribute colour;
  Path staging;
  Path target;

  static final String POD = "0f5b2c1e-7d1a-4c1b-9d5e-3f2a1b0c9d8e";

  @BeforeEach
  void setUp() {
    f = new EngineFixture(dir, 4096 * MIB);
    staging = f.kubelet.resolve("plugins/staging/pv1");
    target = f.kubelet.resolve("pods/" + POD + "/volumes/pv1/mount");
  }

  private LocalVolumeManager open() {
    colour = new ColourAttribute();
    return f.open(AttributeRegistry.of(new IoLimitAttribute(), colour));
  }

  private static VolumeRequest request(
      String name, AccessType type, Map<String, String> parameters, Map<String, String> mutable) {
    return new VolumeRequest(
        name,
        20 * MIB,
        0,
        "",
        type,
        type == AccessType.BLOCK ? "" : "ext4",
        ContentSource.EMPTY,
        parameters,
        mutable);
  }

  private void stageAndPublish(LocalVolumeManager engine, String id) {
    engine.stage(new StageRequest(id, staging, AccessType.FILESYSTEM, "", List.of()));
    engine.publish(
        new PublishRequest(id, staging, target, false, AccessType.FILESYSTEM, List.of(), POD));
  }

  private Map<String, String> recordOf(String id) throws Exception {
    return FlatJson.parse(Files.readString(f.record(id)));
  }

  @Test
  void aKindDeclaredOutsideTheEngineIsCheckedKeptAndApplied() throws Exception {
    String id;
    try (LocalVolumeManager engine = open()) {
      id =
          engine
              .createVolume(
                  request(
                      "a",
                      AccessType.FILESYSTEM,
                      Map.of("colour", "red"),
                      Map.of("shade", "dark", "readIOPS", "100")))
              .id();
      stageAndPublish(engine, id);
      engine.modifyVolume(id, Map.of("shade", "light"));
      assertThat(reason(() -> engine.modifyVolume(id, Map.of("shade", "pink"))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      engine.unpublish(id, target);
      engine.unstage(id, staging);

      assertThat(colour.events)
          .containsExactly(
              "staged " + id + " {colour=red, shade=dark}",
              "published " + id + " to " + POD + " {colour=red, shade=dark}",
              "changed " + id + " {colour=red, shade=light}",
              "unpublished " + id,
              "unstaged " + id);
    }
    assertThat(recordOf(id))
        .containsEntry("param.colour", "red")
        .containsEntry("mutable.shade", "light")
        .doesNotContainKey("mutable.readIOPS");

    try (LocalVolumeManager engine = open()) {
      stageAndPublish(engine, id);
      assertThat(colour.events)
          .as("kept across a restart")
          .contains("published " + id + " to " + POD + " {colour=red, shade=light}");
    }
  }

  @Test
  void aKindsRefusalIsInvalidArgumentAndLeavesNothingBehind() throws Exception {
    try (LocalVolumeManager engine = open()) {
      assertThatThrownBy(
              () ->
                  engine.createVolume(
                      request("b", AccessType.BLOCK, Map.of("colour", "red"), Map.of())))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT))
          .hasMessage("a colour needs a filesystem volume");
      assertThatThrownBy(
              () ->
                  engine.createVolume(
                      request("c", AccessType.FILESYSTEM, Map.of(), Map.of("readIOPS", "0"))))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT))
          .hasMessageStartingWith("readIOPS must be a whole number");
      assertThat(engine.listVolumes("", 10).items()).isEmpty();
      try (var images = Files.list(f.pool.resolve("images"))) {
        assertThat(images).isEmpty();
      }

      // A repeated create compares the kept values, so a different shade is another volume.
      engine.createVolume(
          request("d", AccessType.FILESYSTEM, Map.of("colour", "green"), Map.of("shade", "dark")));
      engine.createVolume(
          request("d", AccessType.FILESYSTEM, Map.of("colour", "green"), Map.of("shade", "dark")));
      assertThat(
              reason(
                  () ->
                      engine.createVolume(
                          request(
                              "d",
                              AccessType.FILESYSTEM,
                              Map.of("colour", "green"),
                              Map.of("shade", "light")))))
          .isEqualTo(Reason.ALREADY_EXISTS);
    }
  }

  @Test
  void aRecordWrittenBeforeVolumesHadAttributesReadsAsAVolumeWithoutThem() throws Exception {
    String id;
    try (LocalVolumeManager engine = open()) {
      id = engine.createVolume(request("old", AccessType.FILESYSTEM, Map.of(), Map.of())).id();
    }
    // The record as a release before mutable parameters, requested sizes and stage flags wrote it.
    Map<String, String> now = recordOf(id);
    Files.writeString(
        f.record(id),
        "{\"kind\":\"volume\",\"id\":\""
            + id
            + "\",\"name\":\"old\",\"pool\":\"main\",\"capacityBytes\":\""
            + now.get("capacityBytes")
            + "\",\"accessType\":\"FILESYSTEM\",\"fsType\":\"ext4\",\"sourceKind\":\"empty\","
            + "\"sourceId\":\"\",\"createdAt\":\""
            + now.get("createdAt")
            + "\",\"state\":\"READY\",\"stagedAt\":\"\"}");
    assertThat(FlatJson.parse(Files.readString(f.record(id)))).doesNotContainKey("mutable.shade");

    try (LocalVolumeManager engine = open()) {
      stageAndPublish(engine, id);
      engine.modifyVolume(id, Map.of("shade", "dark", "writeIOPS", "50"));
      assertThat(colour.events)
          .containsExactly(
              "staged " + id + " {}",
              "published " + id + " to " + POD + " {}",
              "changed " + id + " {shade=dark}");
    }
    assertThat(recordOf(id))
        .containsEntry("mutable.shade", "dark")
        .containsEntry("mutable.writeIOPS", "50");
  }
}

package dev.soko.driver.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class IdsTest {

  @Test
  void generatedIdsMatchTheirOwnPatternAndAreUnique() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String volume = Ids.newVolumeId();
      String snapshot = Ids.newSnapshotId();
      assertThat(Ids.isVolumeId(volume)).isTrue();
      assertThat(Ids.isSnapshotId(snapshot)).isTrue();
      assertThat(Ids.isSnapshotId(volume)).isFalse();
      assertThat(seen.add(volume)).isTrue();
    }
  }

  @Test
  void rejectsAnythingThatCouldNameAnotherFile() {
    String base = Ids.newVolumeId();
    assertThat(Ids.isVolumeId(null)).isFalse();
    assertThat(Ids.isVolumeId("")).isFalse();
    assertThat(Ids.isVolumeId("../" + base)).isFalse();
    assertThat(Ids.isVolumeId(base + "/..")).isFalse();
    assertThat(Ids.isVolumeId("vol-" + "a".repeat(19) + ".")).isFalse();
    assertThat(Ids.isVolumeId("vol-" + "A".repeat(20))).isFalse();
    assertThat(Ids.isVolumeId(base + "\n")).isFalse();
    assertThat(Ids.isVolumeId(base + "a")).isFalse();
  }
}

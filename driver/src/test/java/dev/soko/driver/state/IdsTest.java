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
      String group = Ids.newGroupId();
      assertThat(Ids.isGroupId(group)).isTrue();
      assertThat(Ids.isGroupId(snapshot)).isFalse();
      assertThat(Ids.isSnapshotId(group)).isFalse();
      assertThat(seen.add(volume)).isTrue();
    }
  }

  @Test
  void everyCharacterOfTheAlphabetIsAboutEquallyLikely() {
    int[] counts = new int[128];
    int draws = 2000;
    for (int i = 0; i < draws; i++) {
      for (char c : Ids.newVolumeId().substring(Ids.VOLUME_PREFIX.length()).toCharArray()) {
        counts[c]++;
      }
    }
    double expected = draws * Ids.RANDOM_LENGTH / 36.0; // about 1,111
    for (char c : "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray()) {
      assertThat((double) counts[c]).as("count of %s", c).isBetween(expected * 0.8, expected * 1.2);
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

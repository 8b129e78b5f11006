package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class MountInfoTest {
  static final String SAMPLE =
      """
      22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
      42 22 7:0 / /var/lib/kubelet/staging/pv\\0401 rw,relatime shared:5 master:1 - xfs /dev/loop0 rw,inode64
      43 22 7:0 / /var/lib/kubelet/pods/x/mount ro,nodev,relatime - xfs /dev/loop0 rw
      44 22 0:5 /loop1 /var/lib/kubelet/pods/y/dev rw - devtmpfs udev rw,size=1k
      """;

  @Test
  void parsesFieldsAroundOptionalTags() {
    List<MountEntry> entries = MountInfo.parse(SAMPLE);
    assertThat(entries).hasSize(4);
    MountEntry staged = entries.get(1);
    assertThat(staged.mountPoint()).isEqualTo(Path.of("/var/lib/kubelet/staging/pv 1"));
    assertThat(staged.fsType()).isEqualTo("xfs");
    assertThat(staged.source()).isEqualTo("/dev/loop0");
    assertThat(staged.readOnly()).isFalse();
    assertThat(entries.get(2).readOnly()).isTrue();
    assertThat(entries.get(2).options()).contains("nodev");
    assertThat(entries.get(3).root()).isEqualTo("/loop1");
    assertThat(staged.superOptions()).containsExactly("rw", "inode64");
  }

  @Test
  void unescapesOnlyOctalTriples() {
    assertThat(MountInfo.unescape("a\\134b\\011c")).isEqualTo("a\\b\tc");
    assertThat(MountInfo.unescape("a\\9zz")).isEqualTo("a\\9zz");
    assertThat(MountInfo.unescape("end\\04")).isEqualTo("end\\04");
  }

  @Test
  void rejectsMalformedLines() {
    assertThatThrownBy(() -> MountInfo.parseLine("1 2 3"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void readsTheRealTableOfThisProcess() {
    List<MountEntry> entries = MountInfo.read(Path.of("/proc/self/mountinfo"));
    assertThat(entries).anyMatch(e -> e.mountPoint().equals(Path.of("/")));
  }
}

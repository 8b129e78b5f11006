package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class MountFlagsTest {

  @Test
  void everyAllowedFlagHasAMapping() {
    for (String flag : MountOptions.FLAGS) {
      MountFlags mapped = MountFlags.of(List.of(flag));
      assertThat(mapped.bits() != 0 || mapped.data() != null || flag.equals("rw"))
          .as("flag %s maps to a bit or an option", flag)
          .isTrue();
    }
  }

  @Test
  void genericFlagsBecomeMsBits() {
    assertThat(MountFlags.of(List.of("ro")).bits()).isEqualTo(1);
    assertThat(MountFlags.of(List.of("nosuid,nodev,noexec")).bits()).isEqualTo(2 | 4 | 8);
    assertThat(MountFlags.of(List.of("sync", "dirsync")).bits()).isEqualTo(16 | 128);
    assertThat(MountFlags.of(List.of("noatime", "nodiratime")).bits()).isEqualTo(1024 | 2048);
    assertThat(MountFlags.of(List.of("relatime")).bits()).isEqualTo(1L << 21);
    assertThat(MountFlags.of(List.of("strictatime")).bits()).isEqualTo(1L << 24);
    assertThat(MountFlags.of(List.of("lazytime")).bits()).isEqualTo(1L << 25);
    assertThat(MountFlags.of(List.of()).bits()).isZero();
    assertThat(MountFlags.of(List.of()).data()).isNull();
  }

  @Test
  void filesystemOptionsGoInTheDataStringAfterTheRequestsOwn() {
    MountFlags mapped = MountFlags.of(List.of("ro,discard"), List.of("nouuid"));
    assertThat(mapped).isEqualTo(new MountFlags(MountFlags.MS_RDONLY, "discard,nouuid"));
    assertThat(MountFlags.of(List.of("nodiscard")).data()).isEqualTo("nodiscard");
  }

  @Test
  void rwAfterRoWins() {
    assertThat(MountFlags.of(List.of("ro", "rw")).bits()).isZero();
    assertThat(MountFlags.of(List.of("rw", "ro")).bits()).isEqualTo(MountFlags.MS_RDONLY);
  }

  @Test
  void aBindRemountStartsFromTheCurrentPerMountFlags() {
    List<String> current = List.of("rw", "nosuid", "nodev", "noatime");
    assertThat(MountFlags.forBindRemount(current, List.of("ro")))
        .isEqualTo(MountFlags.MS_RDONLY | MountFlags.MS_NOSUID | MountFlags.MS_NODEV | 1024);
    assertThat(MountFlags.forBindRemount(List.of("ro", "nodev"), List.of("rw")))
        .as("rw clears a current ro")
        .isEqualTo(MountFlags.MS_NODEV);
    assertThat(MountFlags.forBindRemount(current, List.of("relatime")))
        .as("an asked-for atime mode replaces the current one")
        .isEqualTo(MountFlags.MS_NOSUID | MountFlags.MS_NODEV | MountFlags.MS_RELATIME);
    assertThat(MountFlags.forBindRemount(List.of("rw", "seclabel", "inode64"), List.of()))
        .as("options that are not per-mount flags are ignored")
        .isZero();
  }

  /**
   * Lines of /proc/self/mountinfo for an ext4 mounted with each request's flags (as this kernel
   * showed them): the flags read back from a mount mount it the same way again.
   */
  @Test
  void flagsReadBackFromAMountMakeTheSameMount() {
    String[][] cases = {
      {"noatime,nodev,discard", "45 27 7:0 / /m rw,nodev,noatime - ext4 /dev/loop0 rw,discard"},
      {"ro,strictatime,sync,lazytime", "45 27 7:0 / /m ro - ext4 /dev/loop0 ro,sync,lazytime"},
      {
        "nosuid,noexec,nodiratime,dirsync,discard",
        "45 27 7:0 / /m rw,nosuid,noexec,nodiratime,relatime - ext4 /dev/loop0 rw,dirsync,discard"
      },
      {"", "45 27 7:0 / /m rw,relatime - ext4 /dev/loop0 rw"},
    };
    for (String[] c : cases) {
      List<String> requested = c[0].isEmpty() ? List.of() : List.of(c[0]);
      List<String> readBack = MountFlags.flagsOf(MountInfo.parseLine(c[1]));
      assertThat(MountFlags.of(readBack))
          .as("%s read back as %s", c[0], readBack)
          .isEqualTo(MountFlags.of(requested));
    }
  }

  @Test
  void flagsOutsideTheAllowListAreInvalidArguments() {
    assertThatThrownBy(() -> MountFlags.of(List.of("bind")))
        .isInstanceOf(MountException.class)
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.REFUSED_INPUT);
    assertThatThrownBy(() -> MountFlags.of(List.of("noatime,context=x")))
        .isInstanceOf(MountException.class);
  }
}

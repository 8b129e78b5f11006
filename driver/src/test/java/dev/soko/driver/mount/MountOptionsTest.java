package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class MountOptionsTest {

  @Test
  void acceptsAllowListedFlagsInEitherForm() {
    assertThat(MountOptions.checkFlags(List.of("noatime,nodev", "nosuid", "noatime")))
        .containsExactly("noatime", "nodev", "nosuid");
    assertThat(MountOptions.checkFlags(List.of())).isEmpty();
  }

  @Test
  void rejectsFlagsThatNamePathsOrWeakenIntegrity() {
    for (String bad :
        List.of(
            "context=system_u:object_r:foo",
            "nobarrier",
            "data=writeback",
            "loop=/dev/loop0",
            "noatime,uid=0",
            "remount",
            "bind",
            "",
            "ro;rm -rf /")) {
      assertThatThrownBy(() -> MountOptions.checkFlags(List.of(bad)))
          .isInstanceOf(MountException.class)
          .extracting(e -> ((MountException) e).kind())
          .isEqualTo(MountException.Kind.REFUSED_INPUT);
    }
  }

  @Test
  void onlyExt4AndXfsAreFilesystems() {
    assertThat(MountOptions.checkFsType("xfs")).isEqualTo("xfs");
    assertThatThrownBy(() -> MountOptions.checkFsType("nfs")).hasMessageContaining("\"nfs\"");
    assertThatThrownBy(() -> MountOptions.checkFsType("x".repeat(10_000)))
        .hasMessageContaining("...");
  }
}

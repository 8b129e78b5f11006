package dev.soko.driver.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig.Backend;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BackendTableTest {
  @Test
  void eachBackendIsFoundByBothItsNamesAndNamesAreUnique() {
    Set<String> names = new HashSet<>();
    for (Backend backend : Backend.values()) {
      assertThat(Backend.ofFlag(backend.flagName())).contains(backend);
      assertThat(Backend.ofCrd(backend.crdName())).contains(backend);
      assertThat(names.add(backend.flagName())).as(backend.flagName()).isTrue();
      assertThat(names.add(backend.crdName())).as(backend.crdName()).isTrue();
    }
    assertThat(Backend.ofFlag("ImageFile")).as("the CRD's spelling is not the flag's").isEmpty();
    assertThat(Backend.ofCrd("image-file")).isEmpty();
  }

  /** GetCapacity and the operator's checks ask which backend serves a filesystem: one answer. */
  @Test
  void noFilesystemIsServedByTwoBackendsAndEachDefaultIsServed() {
    Set<String> seen = new HashSet<>();
    for (Backend backend : Backend.values()) {
      assertThat(backend.fsTypes()).isNotEmpty().startsWith(backend.defaultFsType());
      for (String fs : backend.fsTypes()) {
        assertThat(seen.add(fs)).as(fs + " of " + backend.flagName()).isTrue();
        assertThat(Backend.serving(fs)).contains(backend);
      }
    }
    assertThat(Backend.allFsTypes()).containsExactly("ext4", "xfs", "btrfs");
  }

  @Test
  void theFormattedFilesystemsAreThoseOfTheBackendsThatFormat() {
    assertThat(Backend.formattedFsTypes()).containsExactly("ext4", "xfs");
  }
}

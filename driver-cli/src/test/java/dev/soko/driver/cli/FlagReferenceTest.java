package dev.soko.driver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FlagReferenceTest {
  @Test
  void theReferenceHasARowPerFlagAndPerPoolFieldWithTheTablesTexts() {
    String markdown = FlagReference.markdown();
    for (Flag flag : Flag.values()) {
      assertThat(markdown).contains("| `" + flag.synopsis().replace("|", "\\|") + "` | ");
    }
    for (PoolField field : PoolField.values()) {
      assertThat(markdown).contains("| `" + field.synopsis().replace("|", "\\|") + "` | ");
    }
    assertThat(markdown)
        .contains("| `--mode=node\\|controller` |")
        .contains("| `backend=image-file\\|btrfs-subvolume` |")
        .contains("| `nodeSelector:KEY=VALUE` | A node label the pool needs")
        .contains("DIR/&lt;driver-name&gt;-reg.sock")
        .doesNotContain("<driver-name>");
    assertThat(markdown.lines().filter(l -> l.startsWith("| `")))
        .hasSize(Flag.values().length + PoolField.values().length);
  }
}

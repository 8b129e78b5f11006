package dev.soko.driver.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.FakeExec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pool carries the number of its on-disk format: a driver opens only the formats it reads, so a
 * downgrade below the release that wrote a newer one is refused before anything is read or changed.
 */
class PoolFormatTest {
  private static final VolumeLayout IMAGES = new VolumeLayout("images", ".img");

  @TempDir Path dir;

  private Path pool() {
    return dir.resolve("pool");
  }

  private Pool open() {
    return Pool.open(
        new PoolConfig("fast", pool(), 1 << 20, 1.0, Set.of("ext4")), IMAGES, new FakeExec());
  }

  private Path formatFile() {
    return pool().resolve(".soko/format");
  }

  @Test
  void aNewPoolIsStampedWithTheCurrentFormat() throws Exception {
    open();
    assertThat(Files.readString(formatFile()).trim()).isEqualTo(String.valueOf(PoolFormat.CURRENT));
  }

  /** Release 0.1.0 wrote no format file: its layout is format 1, which this driver reads. */
  @Test
  void aPoolOfTheFirstReleaseOpensAndIsStamped() throws Exception {
    Files.createDirectories(pool().resolve(".soko/volumes"));
    Files.createDirectories(pool().resolve("images"));
    open();
    assertThat(Files.readString(formatFile()).trim()).isEqualTo("1");
  }

  @Test
  void aPoolInANewerFormatIsRefusedAndLeftAsItIs() throws Exception {
    Files.createDirectories(pool().resolve(".soko"));
    Files.writeString(formatFile(), (PoolFormat.CURRENT + 1) + "\n");
    assertThatThrownBy(this::open)
        .isInstanceOf(PoolException.class)
        .hasMessageContaining("pool fast")
        .hasMessageContaining("on-disk format " + (PoolFormat.CURRENT + 1))
        .hasMessageContaining("reads formats up to " + PoolFormat.CURRENT)
        .hasMessageContaining("downgrade")
        .extracting(e -> ((PoolException) e).kind())
        .isEqualTo(PoolException.Kind.UNUSABLE);
    assertThat(Files.readString(formatFile())).isEqualTo((PoolFormat.CURRENT + 1) + "\n");
    assertThat(pool().resolve(".soko/volumes")).doesNotExist();
  }

  @Test
  void anUnreadableFormatFileIsRefusedRatherThanOverwritten() throws Exception {
    Files.createDirectories(pool().resolve(".soko"));
    Files.write(formatFile(), "\u0000garbage".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(this::open)
        .isInstanceOf(PoolException.class)
        .hasMessageContaining("pool fast")
        .hasMessageContaining(formatFile().toString());
    assertThat(Files.readString(formatFile())).isEqualTo("\u0000garbage");
  }
}

package dev.soko.driver.pool;

import static dev.soko.driver.pool.Sizes.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.state.Ids;
import dev.soko.driver.volume.PoolCapacity;
import dev.soko.driver.volume.StorageException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PoolTest {
  @TempDir Path dir;

  private PoolConfig config(long capacity, double ratio) {
    return new PoolConfig("fast", dir.resolve("pool"), capacity, ratio, Set.of("ext4"));
  }

  @Test
  void layoutIsCreatedAndPathsComeOnlyFromValidIds() {
    Pool pool = Pool.open(config(100 * MIB, 1.0), new FakeExec());
    assertThat(dir.resolve("pool/images")).isDirectory();
    assertThat(dir.resolve("pool/snapshots")).isDirectory();
    assertThat(dir.resolve("pool/.soko/volumes")).isDirectory();
    String id = Ids.newVolumeId();
    assertThat(pool.volumeImage(id)).isEqualTo(dir.resolve("pool/images/" + id + ".img"));
    assertThatThrownBy(() -> pool.volumeImage("../../etc/passwd"))
        .isInstanceOf(StorageException.class);
    assertThatThrownBy(() -> pool.snapshotImage(id)).isInstanceOf(StorageException.class);
  }

  @Test
  void reflinkProbeUsesCpAndFollowsItsOutcome() {
    FakeExec supports = new FakeExec();
    assertThat(Pool.open(config(MIB, 1.0), supports).reflink()).isTrue();
    assertThat(supports.callsOf("cp")).singleElement().asString().startsWith("cp --reflink=always");

    FakeExec refuses = new FakeExec().on(List.of("cp"), 1, "", "Operation not supported");
    assertThat(Pool.open(config(MIB, 1.0), refuses).reflink()).isFalse();
    try (var left = Files.list(dir.resolve("pool/.soko"))) {
      assertThat(left).noneMatch(p -> p.getFileName().toString().startsWith("reflink-probe"));
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void accountingHonoursOverprovisioningAndRefusesWhenFull() {
    Pool pool = Pool.open(config(100 * MIB, 2.0), new FakeExec());
    assertThat(pool.totalBytes()).isEqualTo(200 * MIB);
    pool.reserve("a", 150 * MIB);
    assertThatThrownBy(() -> pool.reserve("b", 60 * MIB))
        .isInstanceOf(StorageException.class)
        .extracting(e -> ((StorageException) e).reason())
        .isEqualTo(StorageException.Reason.RESOURCE_EXHAUSTED);
    pool.reserve("b", 50 * MIB);
    assertThat(pool.capacity()).isEqualTo(new PoolCapacity("fast", 200 * MIB, 0, 0));
    pool.release("a");
    pool.reserve("b", 120 * MIB); // growth of an existing reservation counts only the delta
    assertThat(pool.capacity().availableBytes()).isEqualTo(80 * MIB);
    pool.adopt("c", 30 * MIB);
    pool.release("a"); // released twice: no effect
    pool.release("unknown");
    assertThat(pool.provisionedBytes()).isEqualTo(150 * MIB);
    pool.release("b");
    pool.release("c");
    assertThat(pool.provisionedBytes()).isZero();
  }

  @Test
  void zeroCapacityMeansTheFilesystemsFreeSpace() throws Exception {
    Pool pool = Pool.open(config(0, 1.0), new FakeExec());
    long usable = Files.getFileStore(dir).getUsableSpace();
    assertThat(pool.totalBytes()).isBetween(usable / 2, Files.getFileStore(dir).getTotalSpace());
  }

  @Test
  void sparseImagesCopiesAndGrowthOnRealFiles() throws Exception {
    Pool pool = Pool.open(config(100 * MIB, 1.0), new ProcessExec());
    Path image = pool.volumeImage(Ids.newVolumeId());
    pool.files().createSparse(image, 64 * MIB);
    assertThat(Files.size(image)).isEqualTo(64 * MIB);
    assertThat((Long) Files.getAttribute(image, "size")).isEqualTo(64 * MIB);
    Files.write(image, "hello".getBytes(), java.nio.file.StandardOpenOption.WRITE);

    Path copy = pool.snapshotImage(Ids.newSnapshotId());
    pool.files().copy(image, copy);
    assertThat(Files.size(copy)).isEqualTo(64 * MIB);
    assertThat(new String(Files.readAllBytes(copy), 0, 5)).isEqualTo("hello");

    pool.files().grow(copy, 80 * MIB);
    pool.files().grow(copy, 70 * MIB);
    assertThat(Files.size(copy)).isEqualTo(80 * MIB);
    assertThatThrownBy(() -> pool.files().createSparse(image, MIB))
        .isInstanceOf(java.io.UncheckedIOException.class);
  }

  @Test
  void copyWithoutReflinkAsksForASparseCopy() throws Exception {
    FakeExec exec = new FakeExec().on(List.of("cp", "--reflink=always"), 1, "", "no");
    Pool pool = Pool.open(config(100 * MIB, 1.0), exec);
    Path image = pool.volumeImage(Ids.newVolumeId());
    pool.files().createSparse(image, MIB);
    Path target = pool.snapshotImage(Ids.newSnapshotId());
    Files.createFile(target); // the fake cp does not write; fsync needs the file
    pool.files().copy(image, target);
    assertThat(exec.callsOf("cp")).last().isEqualTo("cp --sparse=always " + image + " " + target);
  }
}

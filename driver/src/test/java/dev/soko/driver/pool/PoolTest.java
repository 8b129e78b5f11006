package dev.soko.driver.pool;

import static dev.soko.driver.pool.Sizes.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.model.PoolCapacity;
import dev.soko.driver.state.Ids;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PoolTest {
  private static final VolumeLayout IMAGES = new VolumeLayout("images", ".img");

  private static final long GIB = 1024 * MIB;

  @TempDir Path dir;

  private PoolConfig config(long capacity, double ratio) {
    return new PoolConfig("fast", dir.resolve("pool"), capacity, ratio, Set.of("ext4"));
  }

  @Test
  void layoutIsCreatedAndPathsComeOnlyFromValidIds() {
    Pool pool = Pool.open(config(100 * MIB, 1.0), IMAGES, new FakeExec());
    assertThat(dir.resolve("pool/images")).isDirectory();
    assertThat(dir.resolve("pool/snapshots")).isDirectory();
    assertThat(dir.resolve("pool/.soko/volumes")).isDirectory();
    String id = Ids.newVolumeId();
    assertThat(pool.volumeLocation(id)).isEqualTo(dir.resolve("pool/images/" + id + ".img"));
    assertThatThrownBy(() -> pool.volumeLocation("../../etc/passwd"))
        .isInstanceOf(PoolException.class);
    assertThatThrownBy(() -> pool.snapshotLocation(id)).isInstanceOf(PoolException.class);
  }

  @Test
  void reflinkProbeUsesCpAndFollowsItsOutcome() {
    FakeExec supports = new FakeExec();
    assertThat(Pool.open(config(MIB, 1.0), IMAGES, supports).reflink()).isTrue();
    assertThat(supports.callsOf("cp")).singleElement().asString().startsWith("cp --reflink=always");

    FakeExec refuses = new FakeExec().on(List.of("cp"), 1, "", "Operation not supported");
    assertThat(Pool.open(config(MIB, 1.0), IMAGES, refuses).reflink()).isFalse();
    try (var left = Files.list(dir.resolve("pool/.soko"))) {
      assertThat(left).noneMatch(p -> p.getFileName().toString().startsWith("reflink-probe"));
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void accountingHonoursOverprovisioningAndRefusesWhenFull() {
    Pool pool = Pool.open(config(100 * MIB, 2.0), IMAGES, new FakeExec());
    assertThat(pool.totalBytes()).isEqualTo(200 * MIB);
    pool.reserve("a", 150 * MIB);
    assertThatThrownBy(() -> pool.reserve("b", 60 * MIB))
        .isInstanceOf(PoolException.class)
        .extracting(e -> ((PoolException) e).kind())
        .isEqualTo(PoolException.Kind.NO_SPACE);
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
  void zeroCapacityMeansTheWholeFilesystemAsItIsNow() throws Exception {
    java.util.concurrent.atomic.AtomicLong size = new java.util.concurrent.atomic.AtomicLong(GIB);
    Pool pool =
        Pool.open(
            config(0, 1.0), IMAGES, new FakeExec(), () -> new PoolUsage(size.get(), 0, size.get()));
    assertThat(pool.totalBytes()).isEqualTo(GIB);
    size.set(2 * GIB); // the filesystem grew (an LV extended under it): read again, not cached
    assertThat(pool.totalBytes()).isEqualTo(2 * GIB);
    assertThat(Pool.open(config(0, 1.0), IMAGES, new FakeExec()).totalBytes())
        .isEqualTo(Files.getFileStore(dir).getTotalSpace());
  }

  @Test
  void capacityIsTheLowerOfLogicalHeadroomAndPhysicalFreeSpace() {
    // 1 GiB × 4 over-provisioning, 300 MiB reserved: 3.7 GiB of logical headroom.
    PoolUsage[] disk = {new PoolUsage(GIB, 100 * MIB, 900 * MIB)};
    Pool pool = Pool.open(config(GIB, 4.0), IMAGES, new FakeExec(), () -> disk[0]);
    pool.reserve("a", 300 * MIB);
    assertThat(pool.capacity()).isEqualTo(new PoolCapacity("fast", 4 * GIB, 900 * MIB, 900 * MIB));
    assertThat(pool.report().physicallyLimited()).isTrue();

    disk[0] = new PoolUsage(GIB, GIB - 10 * MIB, 10 * MIB); // the images were written full
    assertThat(pool.capacity().availableBytes()).isEqualTo(10 * MIB);
    assertThatThrownBy(() -> pool.reserve("b", 20 * MIB))
        .isInstanceOf(PoolException.class)
        .hasMessageContaining("its filesystem has only 10485760 bytes free")
        .extracting(e -> ((PoolException) e).kind())
        .isEqualTo(PoolException.Kind.NO_SPACE);
    pool.reserve("a", 200 * MIB); // shrinking or keeping a reservation never needs free space
    pool.reserve("b", 10 * MIB);

    disk[0] = new PoolUsage(8 * GIB, 0, 8 * GIB); // plenty of disk: the accounting limits again
    assertThat(pool.capacity().availableBytes()).isEqualTo(4 * GIB - 210 * MIB);
    assertThat(pool.report().physicallyLimited()).isFalse();
  }

  @Test
  void anUnreadableFilesystemOffersNothing() {
    boolean[] gone = {false};
    Pool pool =
        Pool.open(
            config(GIB, 1.0),
            IMAGES,
            new FakeExec(),
            () -> {
              if (gone[0]) {
                throw new java.io.IOException("No such device");
              }
              return new PoolUsage(GIB, 0, GIB);
            });
    gone[0] = true;
    assertThat(pool.capacity().availableBytes()).isZero();
    assertThatThrownBy(() -> pool.reserve("a", MIB))
        .isInstanceOf(PoolException.class)
        .extracting(e -> ((PoolException) e).kind())
        .isEqualTo(PoolException.Kind.UNUSABLE);
  }

  @Test
  void sparseImagesCopiesAndGrowthOnRealFiles() throws Exception {
    ProcessExec exec = new ProcessExec();
    Pool pool = Pool.open(config(100 * MIB, 1.0), IMAGES, exec);
    ImageFiles files = new ImageFiles(exec, pool.reflink());
    Path image = pool.volumeLocation(Ids.newVolumeId());
    files.createSparse(image, 64 * MIB);
    assertThat(Files.size(image)).isEqualTo(64 * MIB);
    assertThat((Long) Files.getAttribute(image, "size")).isEqualTo(64 * MIB);
    Files.write(image, "hello".getBytes(), java.nio.file.StandardOpenOption.WRITE);

    Path copy = pool.snapshotLocation(Ids.newSnapshotId());
    files.copy(image, copy);
    assertThat(Files.size(copy)).isEqualTo(64 * MIB);
    assertThat(new String(Files.readAllBytes(copy), 0, 5)).isEqualTo("hello");

    files.grow(copy, 80 * MIB);
    files.grow(copy, 70 * MIB);
    assertThat(Files.size(copy)).isEqualTo(80 * MIB);
    assertThatThrownBy(() -> files.createSparse(image, MIB))
        .isInstanceOf(java.io.UncheckedIOException.class);
  }

  @Test
  void copyWithoutReflinkAsksForASparseCopy() throws Exception {
    FakeExec exec = new FakeExec().on(List.of("cp", "--reflink=always"), 1, "", "no");
    Pool pool = Pool.open(config(100 * MIB, 1.0), IMAGES, exec);
    ImageFiles files = new ImageFiles(exec, pool.reflink());
    Path image = pool.volumeLocation(Ids.newVolumeId());
    files.createSparse(image, MIB);
    Path target = pool.snapshotLocation(Ids.newSnapshotId());
    Files.createFile(target); // the fake cp does not write; fsync needs the file
    files.copy(image, target);
    assertThat(exec.callsOf("cp")).last().isEqualTo("cp --sparse=always " + image + " " + target);
  }
}

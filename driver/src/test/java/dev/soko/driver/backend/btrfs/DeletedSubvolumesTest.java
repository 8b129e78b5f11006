package dev.soko.driver.backend.btrfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.btrfs.Btrfs;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.sys.Errno;
import dev.soko.driver.sys.FakeSyscalls;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which qgroups a sweep destroys: only those of subvolumes the pool deleted, and only once the root
 * tree has no item for the subvolume; what the kernel removed itself is forgotten.
 */
class DeletedSubvolumesTest {
  private static final String SEARCH = " 0xd0009411";
  private static final String DESTROY = " 0x4010942a";

  @TempDir Path pool;
  final FakeSyscalls sys = new FakeSyscalls();
  DeletedSubvolumes deleted;
  String dir;

  @BeforeEach
  void setUp() {
    deleted = new DeletedSubvolumes(new Btrfs(new FakeExec(), sys, pool.resolve("sysfs")));
    dir = "ioctl " + pool.getFileName();
  }

  @Test
  void aQgroupIsLeftAloneWhileTheCleanerHasTheSubvolumeAndDestroyedOnceItIsDropped() {
    deleted.remember(pool, 300);
    assertThat(markers()).containsExactly("300");

    // The fake leaves the search's nr_items at the one asked for: the root item is still there.
    assertThat(deleted.sweep(pool)).isZero();
    assertThat(sys.calls()).noneMatch(call -> call.contains(DESTROY));
    assertThat(markers()).containsExactly("300");

    rootTreeHoldsNothing();
    assertThat(deleted.sweep(pool)).isEqualTo(1);
    assertThat(sys.calls()).contains(dir + DESTROY + " struct");
    assertThat(ByteBuffer.wrap(last()).order(ByteOrder.nativeOrder()).getLong(8)).isEqualTo(300);
    assertThat(markers()).isEmpty();
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void aQgroupTheKernelRemovedIsForgottenAndABusyOneOrAFailureIsTriedAgain() {
    rootTreeHoldsNothing();
    deleted.remember(pool, 301);
    sys.failOn(dir + DESTROY, Errno.ENOENT);
    assertThat(deleted.sweep(pool)).isZero();
    assertThat(markers()).isEmpty();

    deleted.remember(pool, 302);
    sys.failOn(dir + DESTROY, Errno.EBUSY);
    assertThat(deleted.sweep(pool)).isZero();
    assertThat(markers()).containsExactly("302");
    sys.failOn(dir + DESTROY, Errno.EPERM);
    assertThat(deleted.sweep(pool)).isZero();
    assertThat(markers()).containsExactly("302");
    assertThat(deleted.sweep(pool)).isEqualTo(1);
    assertThat(markers()).isEmpty();
  }

  @Test
  void onlyTheSubvolumesThePoolDeletedAreSwept() throws Exception {
    rootTreeHoldsNothing();
    assertThat(deleted.sweep(pool)).as("no markers yet, no directory").isZero();
    Files.createDirectories(DeletedSubvolumes.markers(pool));
    Files.writeString(DeletedSubvolumes.markers(pool).resolve("notes"), "not an ID");
    assertThat(deleted.sweep(pool)).isZero();
    assertThat(sys.calls()).as("no qgroup it was not told of").isEmpty();
    assertThat(markers()).containsExactly("notes");
  }

  private void rootTreeHoldsNothing() {
    byte[] answer = new byte[72];
    ByteBuffer.wrap(answer).order(ByteOrder.nativeOrder()).putInt(64, 0);
    sys.fill(dir + SEARCH, answer);
  }

  private byte[] last() {
    return sys.structs().get(sys.structs().size() - 1);
  }

  private java.util.List<String> markers() {
    return DeletedSubvolumes.list(DeletedSubvolumes.markers(pool)).stream()
        .map(p -> p.getFileName().toString())
        .toList();
  }
}

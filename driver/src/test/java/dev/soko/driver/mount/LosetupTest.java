package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.sys.Errno;
import dev.soko.driver.sys.FakeSyscalls;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LosetupTest {
  @TempDir Path sysfs;
  @TempDir Path pool;
  final FakeSyscalls sys = new FakeSyscalls();
  Losetup losetup;

  @BeforeEach
  void setUp() {
    // an empty sysfs: every detach is complete at once
    losetup = new Losetup(sys, sysfs, Path.of("/dev"));
  }

  /** Lays out /sys/block/NAME/loop/backing_file as the kernel does for an attached device. */
  private void attached(String name, String backing) throws IOException {
    Path loop = Files.createDirectories(sysfs.resolve(name).resolve("loop"));
    Files.writeString(loop.resolve("backing_file"), backing + "\n");
    sys.heldOpen(backing); // a device holds its backing file open
  }

  @Test
  void listsAttachedDevicesFromSysfsAndMarksDeletedBackingFiles() throws IOException {
    attached("loop1", "/pool/images/vol-a.img");
    attached("loop0", "/pool/images/vol-b.img (deleted)");
    Files.createDirectories(sysfs.resolve("loop2")); // a free device has no loop/ directory
    assertThat(losetup.list())
        .containsExactly(
            new LoopDevice("/dev/loop0", Path.of("/pool/images/vol-b.img"), true),
            new LoopDevice("/dev/loop1", Path.of("/pool/images/vol-a.img"), false));
    assertThat(sys.calls()).as("listing reads sysfs only, it opens no device").isEmpty();
  }

  /** A real file to attach, so that it has an identity. */
  private Path image(String name) throws IOException {
    Path file = pool.resolve("images").resolve(name);
    Files.createDirectories(file.getParent());
    return Files.write(file, new byte[512]);
  }

  /** The loop_info64 LOOP_GET_STATUS64 gives for a device backed by {@code file}. */
  private static byte[] status(Path file) {
    FileId id = FileId.of(file).orElseThrow();
    byte[] info = new byte[LoopStructs.INFO64_BYTES];
    ByteBuffer.wrap(info)
        .order(ByteOrder.nativeOrder())
        .putLong(0, id.device())
        .putLong(8, id.inode());
    return info;
  }

  @Test
  void findsAttachmentsOfAnImageByIdentityOpeningOnlyTheDevicesThatNameIt() throws IOException {
    Path a = image("vol-a.img");
    Path b = image("vol-b.img");
    attached("loop1", a.toString());
    attached("loop2", b.toString());
    attached("loop0", "/elsewhere/vol-b.img (deleted)");
    sys.fill("ioctl loop1 0x4c05", status(a)).fill("ioctl loop2 0x4c05", status(b));

    assertThat(losetup.devicesFor(a)).containsExactly("/dev/loop1");
    assertThat(sys.calls())
        .as(
            "the lease is refused, then LOOP_GET_STATUS64 on the one device whose file has the"
                + " image's name")
        .containsExactly(
            "open " + a + " 0",
            "fcntl vol-a.img 10 28",
            "fcntl vol-a.img 1024 1",
            "open /dev/loop1 0",
            "ioctl loop1 0x4c05 struct");
    assertThat(losetup.devicesFor(b)).containsExactly("/dev/loop2");
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void anImageAttachedThroughAMountThatIsGoneIsFoundByIdentity() throws IOException {
    Path a = image("vol-a.img");
    attached("loop3", "/images/vol-a.img"); // the pool was bound into a container that is gone
    sys.heldOpen(a.toString()).fill("ioctl loop3 0x4c05", status(a));
    assertThat(losetup.devicesFor(a)).containsExactly("/dev/loop3");
    assertThat(losetup.devicesHolding(a)).containsExactly("/dev/loop3");
  }

  @Test
  void aFileOfTheSameNameThatIsNotTheImageIsNotIt() throws IOException {
    Path a = image("vol-a.img");
    Path other = Files.write(pool.resolve("vol-a.img"), new byte[512]);
    attached("loop3", "/images/vol-a.img");
    sys.heldOpen(a.toString()).fill("ioctl loop3 0x4c05", status(other));
    assertThat(losetup.devicesFor(a)).isEmpty();
    assertThat(losetup.devicesHolding(a)).isEmpty();
  }

  @Test
  void aDeletedBackingFileNeverMatchesALiveImageEvenWithItsInodeNumber() throws IOException {
    Path a = image("vol-a.img");
    attached("loop1", a + " (deleted)");
    sys.fill("ioctl loop1 0x4c05", status(a)); // the number was reused by the file there now
    assertThat(losetup.devicesFor(a)).isEmpty();
    assertThat(losetup.devicesHolding(a)).isEmpty();
    assertThat(sys.calls())
        .as("a deleted file is not asked for")
        .noneMatch(call -> call.startsWith("open /dev/") || call.startsWith("ioctl"));
  }

  @Test
  void anImageDeletedUnderItsDeviceIsStillHeldByIt() throws IOException {
    Path gone = pool.resolve("images/vol-b.img");
    attached("loop0", gone + " (deleted)");
    attached("loop1", "/images/vol-b.img"); // no file of that path: not held
    assertThat(losetup.devicesFor(gone)).isEmpty();
    assertThat(losetup.devicesHolding(gone)).containsExactly("/dev/loop0");
  }

  @Test
  void aDeviceDetachedSinceTheListingHoldsNoFileAndOtherErrorsAreErrors() throws IOException {
    Path a = image("vol-a.img");
    attached("loop1", a.toString());
    sys.failOn("ioctl loop1 0x4c05", Errno.ENXIO);
    assertThat(losetup.devicesFor(a)).isEmpty();
    sys.failOn("open /dev/loop1", Errno.EACCES);
    assertThatThrownBy(() -> losetup.devicesFor(a))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("EACCES");
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void aBackingFileThatCannotBeReadButIsStillThereIsAnError() throws IOException {
    attached("loop1", "/pool/images/vol-a.img");
    Files.createDirectories(sysfs.resolve("loop2/loop/backing_file")); // reading it fails: EISDIR
    assertThatThrownBy(() -> losetup.list())
        .isInstanceOf(MountException.class)
        .hasMessageContaining("loop2");
  }

  @Test
  void anImageNothingHoldsOpenIsAnsweredByALeaseWithoutTheScan() throws IOException {
    Path a = image("vol-a.img");
    // sysfs names a, but nothing holds a open (the fake below): the granted lease is the answer
    attached("loop2", a.toString());
    FakeSyscalls free = new FakeSyscalls();
    Losetup onFree = new Losetup(free, sysfs, Path.of("/dev"));

    assertThat(onFree.devicesFor(a)).isEmpty();
    assertThat(free.calls())
        .containsExactly(
            "open " + a + " 0",
            "fcntl vol-a.img 10 28", // F_SETSIG SIGWINCH: a lease break must not end the JVM
            "fcntl vol-a.img 1024 1", // F_SETLEASE F_WRLCK, granted
            "fcntl vol-a.img 1024 2"); // F_UNLCK
    assertThat(free.openFiles()).isEmpty();
  }

  @Test
  void whereLeasesCannotTellTheScanDecides() throws IOException {
    Path a = image("vol-a.img");
    attached("loop1", a.toString());
    FakeSyscalls noLeases = new FakeSyscalls().failOn("fcntl vol-a.img 1024", Errno.EINVAL);
    noLeases.fill("ioctl loop1 0x4c05", status(a));
    Losetup onNoLeases = new Losetup(noLeases, sysfs, Path.of("/dev"));

    assertThat(onNoLeases.devicesFor(a)).containsExactly("/dev/loop1");
    assertThat(noLeases.openFiles()).isEmpty();
  }

  @Test
  void noSysfsMeansNoDevices() {
    assertThat(new Losetup(sys, sysfs.resolve("absent"), Path.of("/dev")).list()).isEmpty();
  }

  @Test
  void attachConfiguresTheFreeDeviceInOneCall() {
    sys.freeLoops(7);
    assertThat(losetup.attach(Path.of("/pool/images/vol-a.img"))).isEqualTo("/dev/loop7");
    assertThat(sys.calls())
        .containsExactly(
            "open /pool/images/vol-a.img 2",
            "open /dev/loop-control 2",
            "ioctl loop-control 0x4c82 0",
            "open /dev/loop7 2",
            "ioctl loop7 0x4c0a struct");
    assertThat(sys.structs().get(0))
        .isEqualTo(LoopStructs.config(10, Path.of("/pool/images/vol-a.img")));
    assertThat(sys.openFiles()).as("every descriptor is closed").isEmpty();
  }

  @Test
  void directIoAsksForTheFlagAndAnExplicitBlockSize() {
    sys.freeLoops(7);
    losetup.attach(Path.of("/p/v.img"), 4096);
    ByteBuffer config = ByteBuffer.wrap(sys.structs().get(0)).order(ByteOrder.nativeOrder());
    assertThat(config.getInt(4)).as("loop_config.block_size").isEqualTo(4096);
    assertThat(config.getInt(8 + 52)).as("lo_flags").isEqualTo(LoopStructs.LO_FLAGS_DIRECT_IO);
    assertThat(LoopStructs.config(10, Path.of("/p/v.img")))
        .as("a buffered device leaves both zero, as before")
        .isEqualTo(LoopStructs.config(10, Path.of("/p/v.img"), 0));
  }

  @Test
  void kernelsWithoutLoopConfigureGetTheBlockSizeAndDirectIoByIoctl() {
    sys.freeLoops(2).failOn("ioctl loop2 0x4c0a", Errno.EINVAL);
    sys.failOn("ioctl loop2 0x4c08", Errno.EINVAL); // this backing file cannot do direct I/O
    assertThat(losetup.attach(Path.of("/p/v.img"), 1024)).isEqualTo("/dev/loop2");
    assertThat(sys.calls())
        .endsWith(
            "ioctl loop2 0x4c00 10",
            "ioctl loop2 0x4c04 struct",
            "ioctl loop2 0x4c09 1024", // LOOP_SET_BLOCK_SIZE
            "ioctl loop2 0x4c08 1"); // LOOP_SET_DIRECT_IO, refused: the device stays buffered
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void aDeviceTakenByAnotherProcessIsSkipped() {
    sys.freeLoops(3, 4).failOn("ioctl loop3 0x4c0a", Errno.EBUSY);
    assertThat(losetup.attach(Path.of("/p/v.img"))).isEqualTo("/dev/loop4");
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void givesUpWhenEveryFreeDeviceIsTakenFirst() {
    for (int i = 0; i < Losetup.ATTACH_ATTEMPTS; i++) {
      sys.failOn("ioctl loop0 0x4c0a", Errno.EBUSY);
    }
    assertThatThrownBy(() -> losetup.attach(Path.of("/p/v.img")))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("16 attempts");
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void kernelsWithoutLoopConfigureGetSetFdAndStatus() {
    sys.freeLoops(2).failOn("ioctl loop2 0x4c0a", Errno.EINVAL);
    assertThat(losetup.attach(Path.of("/p/v.img"))).isEqualTo("/dev/loop2");
    assertThat(sys.calls())
        .endsWith(
            "ioctl loop2 0x4c0a struct",
            "ioctl loop2 0x4c00 10", // LOOP_SET_FD with the image's descriptor
            "ioctl loop2 0x4c04 struct"); // LOOP_SET_STATUS64
    assertThat(sys.structs().get(1)).isEqualTo(LoopStructs.info64(Path.of("/p/v.img")));
  }

  @Test
  void aFailedStatusUnbindsTheDeviceAgain() {
    sys.freeLoops(2).failOn("ioctl loop2 0x4c0a", Errno.ENOTTY);
    sys.failOn("ioctl loop2 0x4c04", Errno.EINVAL);
    assertThatThrownBy(() -> losetup.attach(Path.of("/p/v.img")))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("EINVAL");
    assertThat(sys.calls()).endsWith("ioctl loop2 0x4c01 0");
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void anUnreadableImageIsInternalWithItsErrno() {
    sys.failOn("open /p/v.img", Errno.EACCES);
    assertThatThrownBy(() -> losetup.attach(Path.of("/p/v.img")))
        .isInstanceOf(MountException.class)
        .hasMessage("open /p/v.img 2: EACCES (Permission denied)")
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.FAILED);
  }

  @Test
  void refreshAndDetachAreIoctlsOnLoopDevicesOnly() {
    losetup.refreshSize("/dev/loop3");
    losetup.detach("/dev/loop3");
    assertThat(sys.calls())
        .containsExactly(
            "open /dev/loop3 0",
            "ioctl loop3 0x4c07 0", // LOOP_SET_CAPACITY
            "open /dev/loop3 0",
            "ioctl loop3 0x4c01 0"); // LOOP_CLR_FD
    assertThat(sys.openFiles()).isEmpty();
    assertThatThrownBy(() -> losetup.detach("/dev/sda"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDeviceThatStaysBoundFailsTheDetachRetryablyNamingItAndItsImage() throws IOException {
    attached(
        "loop3", "/pool/images/vol-a.img"); // another opener keeps it: LOOP_CLR_FD only marks it
    Losetup briefly = new Losetup(sys, sysfs, Path.of("/dev"), Duration.ofMillis(50));
    assertThatThrownBy(() -> briefly.detach("/dev/loop3"))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("/dev/loop3")
        .hasMessageContaining("/pool/images/vol-a.img")
        .hasMessageContaining("last close")
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.BUSY);
    assertThat(sys.calls()).containsExactly("open /dev/loop3 0", "ioctl loop3 0x4c01 0");
    assertThat(sys.openFiles()).isEmpty();
  }

  @Test
  void aDeviceLetGoOfWhileWaitingIsDetached() throws Exception {
    attached("loop3", "/pool/images/vol-a.img");
    Path backing = sysfs.resolve("loop3/loop/backing_file");
    // the kernel clears the device at its other holder's last close
    Thread lastClose = later(() -> Files.delete(backing));
    new Losetup(sys, sysfs, Path.of("/dev"), Duration.ofSeconds(10)).detach("/dev/loop3");
    lastClose.join();
    assertThat(backing).doesNotExist();
  }

  @Test
  void aDeviceBoundToAnotherImageSinceIsNoLongerOurs() throws Exception {
    attached("loop3", "/pool/images/vol-a.img");
    Path backing = sysfs.resolve("loop3/loop/backing_file");
    // cleared, then handed to another volume's stage before the wait looked again
    Thread reused = later(() -> Files.writeString(backing, "/pool/images/vol-b.img\n"));
    new Losetup(sys, sysfs, Path.of("/dev"), Duration.ofSeconds(10)).detach("/dev/loop3");
    reused.join();
  }

  private interface HostChange {
    void run() throws IOException;
  }

  /** Runs {@code change} 30 ms from now, on its own thread, as the kernel would. */
  private static Thread later(HostChange change) {
    Thread thread =
        new Thread(
            () -> {
              try {
                Thread.sleep(30);
                change.run();
              } catch (InterruptedException | IOException e) {
                throw new IllegalStateException(e);
              }
            });
    thread.start();
    return thread;
  }

  @Test
  void detachingADeviceThatIsAlreadyFreeSucceeds() {
    sys.failOn("ioctl loop3 0x4c01", Errno.ENXIO);
    losetup.detach("/dev/loop3");
    sys.failOn("ioctl loop3 0x4c01", Errno.EBUSY);
    assertThatThrownBy(() -> losetup.detach("/dev/loop3"))
        .isInstanceOf(MountException.class)
        .hasMessageContaining("EBUSY");
  }
}

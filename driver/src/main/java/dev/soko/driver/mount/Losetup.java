package dev.soko.driver.mount;

import dev.soko.driver.sys.Errno;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.sys.SyscallException;
import dev.soko.driver.sys.Syscalls;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.IntConsumer;

/**
 * The real {@link LoopDevices}, on the loop driver's ioctls (what losetup(8) does, without the ~3-4
 * ms of spawning it from the JVM for every stage and unstage).
 */
public final class Losetup implements LoopDevices {
  static final long LOOP_SET_FD = 0x4C00;
  static final long LOOP_CLR_FD = 0x4C01;
  static final long LOOP_SET_STATUS64 = 0x4C04;
  static final long LOOP_GET_STATUS64 = 0x4C05;
  static final long LOOP_SET_CAPACITY = 0x4C07;
  static final long LOOP_SET_DIRECT_IO = 0x4C08;
  static final long LOOP_SET_BLOCK_SIZE = 0x4C09;
  static final long LOOP_CONFIGURE = 0x4C0A;
  static final long LOOP_CTL_GET_FREE = 0x4C82;
  static final int O_RDONLY = 0;
  static final int O_RDWR = 2;
  static final int F_SETSIG = 10;
  static final int F_SETLEASE = 1024;
  static final int F_WRLCK = 1;
  static final int F_UNLCK = 2;

  /** Ignored unless handled (the JVM does not handle it), unlike the lease's default SIGIO. */
  static final int SIGWINCH = 28;

  /** How often another process may take the free device we were given before we give up. */
  static final int ATTACH_ATTEMPTS = 16;

  private static final String DELETED = " (deleted)";

  /**
   * How long a detach waits for the device's other holders to let go. A udev probe or a mount
   * namespace copied while the volume was mounted (a process being set up in its own namespace)
   * outlasted 5 s under load; the kubelet allows NodeUnstageVolume two minutes. A holder that stays
   * longer is reported, and the retried call waits again.
   */
  static final Duration DETACH_WAIT = Duration.ofSeconds(20);

  /** The longest pause between two looks at a device being released. */
  private static final long MAX_PAUSE_MILLIS = 20;

  private final Syscalls sys;
  private final Path sysfs;
  private final Path dev;
  private final Duration detachWait;

  public Losetup() {
    this(new LinuxSyscalls(), Path.of("/sys/block"), Path.of("/dev"));
  }

  /** {@code sysfs} is where attached devices are listed, {@code dev} where their nodes are. */
  Losetup(Syscalls sys, Path sysfs, Path dev) {
    this(sys, sysfs, dev, DETACH_WAIT);
  }

  /** As above, with {@code detachWait} as the longest a detach waits for the device to be free. */
  Losetup(Syscalls sys, Path sysfs, Path dev, Duration detachWait) {
    this.sys = sys;
    this.sysfs = sysfs;
    this.dev = dev;
    this.detachWait = detachWait;
  }

  /**
   * Binds the first free loop device to {@code image}: LOOP_CTL_GET_FREE names it, LOOP_CONFIGURE
   * binds it in one step (kernel 5.8+; older kernels answer EINVAL or ENOTTY and get LOOP_SET_FD
   * plus LOOP_SET_STATUS64). Another process may bind the same free device between the two calls
   * (EBUSY): then the next free one is asked for.
   *
   * <p>With {@code directIoBlockSize} above 0 the device does direct I/O on its file (no second
   * copy in the pool's page cache, an application's O_DIRECT reaches the disk) with that logical
   * block size, which the caller picks so that the filesystem inside still mounts ({@link
   * VolumeGeometry}); 0 is buffered I/O with 512-byte blocks, as before.
   */
  @Override
  public String attach(Path image, int directIoBlockSize) {
    return KernelErrors.call(
        () -> {
          int file = sys.open(image.toString(), O_RDWR);
          try {
            for (int attempt = 0; attempt < ATTACH_ATTEMPTS; attempt++) {
              String device = dev.resolve("loop" + freeDevice()).toString();
              int loop = sys.open(device, O_RDWR);
              try {
                if (bind(loop, file, image, directIoBlockSize)) {
                  return device;
                }
              } finally {
                sys.close(loop);
              }
            }
          } finally {
            sys.close(file);
          }
          throw MountException.failed(
              "no loop device for "
                  + image
                  + ": other processes took each free one first ("
                  + ATTACH_ATTEMPTS
                  + " attempts)");
        });
  }

  /**
   * The devices attached to {@code image}, without reading sysfs when nothing holds the file open:
   * a loop device keeps its backing file open, so proving that no one has it open proves that no
   * device is attached, in any mount namespace and by whatever path. Delete, stage and unstage all
   * ask this, and the sysfs scan cost a tenth of a create+delete pair's CPU time on a host with a
   * dozen loop devices (perf, measured).
   */
  @Override
  public List<String> devicesFor(Path image) {
    return openedByNoOne(image) ? List.of() : LoopDevices.super.devicesFor(image);
  }

  /**
   * True when no open file other than this probe's refers to {@code file}. The kernel grants a
   * write lease (fcntl F_SETLEASE, F_WRLCK) only then: it counts every open file of the inode, for
   * reading and for writing (fcntl(2)); the lease is given back at once. False when the lease is
   * refused (EAGAIN: something has it open, perhaps a loop device) and whenever leases cannot tell
   * (a filesystem or a kernel without them, no CAP_LEASE): the scan decides then.
   *
   * <p>An open() of the file by anyone while the lease is held breaks it and signals the holder,
   * with SIGIO unless told otherwise. SIGIO's default action ends the process, so the signal is set
   * to SIGWINCH first, which is ignored.
   */
  private boolean openedByNoOne(Path file) {
    int fd;
    try {
      fd = sys.open(file.toString(), O_RDONLY);
    } catch (SyscallException | IllegalStateException e) {
      return false;
    }
    try {
      sys.fcntl(fd, F_SETSIG, SIGWINCH);
      sys.fcntl(fd, F_SETLEASE, F_WRLCK);
      sys.fcntl(fd, F_SETLEASE, F_UNLCK);
      return true;
    } catch (SyscallException e) {
      return false;
    } finally {
      sys.close(fd);
    }
  }

  private int freeDevice() {
    int control = sys.open(dev.resolve("loop-control").toString(), O_RDWR);
    try {
      return sys.ioctl(control, LOOP_CTL_GET_FREE, 0);
    } finally {
      sys.close(control);
    }
  }

  /** Binds an open loop device to an open file; false when someone else bound it first. */
  private boolean bind(int loop, int file, Path image, int directIoBlockSize) {
    try {
      sys.ioctl(loop, LOOP_CONFIGURE, LoopStructs.config(file, image, directIoBlockSize));
      return true;
    } catch (SyscallException e) {
      if (e.errno() == Errno.EBUSY) {
        return false;
      }
      if (e.errno() != Errno.EINVAL && e.errno() != Errno.ENOTTY) {
        throw e;
      }
    }
    try {
      sys.ioctl(loop, LOOP_SET_FD, file);
    } catch (SyscallException e) {
      if (e.errno() == Errno.EBUSY) {
        return false;
      }
      throw e;
    }
    try {
      sys.ioctl(loop, LOOP_SET_STATUS64, LoopStructs.info64(image));
      if (directIoBlockSize > 0) {
        sys.ioctl(loop, LOOP_SET_BLOCK_SIZE, directIoBlockSize);
        setDirectIo(loop);
      }
    } catch (SyscallException e) {
      sys.ioctl(loop, LOOP_CLR_FD, 0); // never leave a half-configured device behind
      throw e;
    }
    return true;
  }

  /** EINVAL: the backing file cannot take direct I/O here; the device stays buffered, as before. */
  private void setDirectIo(int loop) {
    try {
      sys.ioctl(loop, LOOP_SET_DIRECT_IO, 1);
    } catch (SyscallException e) {
      if (e.errno() != Errno.EINVAL) {
        throw e;
      }
    }
  }

  /**
   * Reads the kernel's own table in sysfs ({@code /sys/block/loopN/loop/backing_file}) rather than
   * running {@code losetup --list}: every delete and stage asks this, and a file read costs
   * microseconds where spawning a process costs milliseconds. No device is opened.
   */
  @Override
  public List<LoopDevice> list() {
    List<LoopDevice> devices = new ArrayList<>();
    // A filter, not the glob "loop*": a glob compiles a regular expression on every call.
    try (DirectoryStream<Path> blocks =
        Files.newDirectoryStream(sysfs, p -> p.getFileName().toString().startsWith("loop"))) {
      for (Path block : blocks) {
        Path file = block.resolve("loop/backing_file");
        // A free device has no backing_file. java.io.File asks without throwing; Files.exists and
        // a failed read both build a NoSuchFileException, and most loop devices are free.
        if (!file.toFile().exists()) {
          continue;
        }
        readBacking(file)
            .map(backing -> device("/dev/" + block.getFileName(), backing))
            .ifPresent(devices::add);
      }
    } catch (NoSuchFileException noLoopDevicesYet) {
      return List.of();
    } catch (IOException e) {
      throw MountException.failed(
          "cannot list loop devices in " + sysfs + ": " + e.getMessage(), e);
    }
    devices.sort(Comparator.comparing(LoopDevice::device));
    return devices;
  }

  /**
   * The backing file of an attached device; empty when the device is free (no such file). A device
   * detached or removed while it is read fails with another error (ENXIO, ENODEV) and is free too
   * by the time the file is gone; an error on a file that is still there is real.
   */
  private static Optional<String> readBacking(Path file) throws IOException {
    try {
      String value = Files.readString(file);
      return Optional.of(value.endsWith("\n") ? value.substring(0, value.length() - 1) : value);
    } catch (NoSuchFileException free) {
      return Optional.empty();
    } catch (IOException e) {
      if (!Files.exists(file)) {
        return Optional.empty();
      }
      throw new IOException(file + ": " + e.getMessage(), e);
    }
  }

  private static LoopDevice device(String name, String backing) {
    boolean deleted = backing.endsWith(DELETED);
    String path = deleted ? backing.substring(0, backing.length() - DELETED.length()) : backing;
    return new LoopDevice(name, Path.of(path), deleted);
  }

  /**
   * LOOP_GET_STATUS64 on the device. A device detached since it was listed (ENXIO) holds no file;
   * any other failure is an error, never a "no": a caller could take it as "not this volume's".
   */
  @Override
  public Optional<FileId> backingFileId(String device) {
    byte[] info = new byte[LoopStructs.INFO64_BYTES];
    try {
      KernelErrors.run(() -> withDevice(device, fd -> sys.ioctl(fd, LOOP_GET_STATUS64, info)));
    } catch (MountException e) {
      if (isFree(e)) {
        return Optional.empty();
      }
      throw e;
    }
    return Optional.of(LoopStructs.backingFileId(info));
  }

  @Override
  public void refreshSize(String device) {
    KernelErrors.run(() -> onDevice(device, LOOP_SET_CAPACITY));
  }

  /**
   * Unbinds the device, and returns only once it is free: until then its image is still in use (a
   * delete refuses it, a stage would pick up a device about to vanish). A device that is no longer
   * bound (ENXIO: someone detached it since it was listed) is the outcome asked for, not an error.
   * A device still bound to the same file after {@link #DETACH_WAIT} fails the call as BUSY, naming
   * the device and the file; the same call made again waits again.
   */
  @Override
  public void detach(String device) {
    Path backingFile = backingFileEntry(checkDevice(device));
    Optional<Path> bound = boundFile(backingFile);
    try {
      KernelErrors.run(() -> onDevice(device, LOOP_CLR_FD));
    } catch (MountException e) {
      if (!isFree(e)) {
        throw e;
      }
    }
    bound.ifPresent(file -> awaitDetached(device, backingFile, file));
  }

  /** ENXIO: the device is bound to no file (any more). */
  private static boolean isFree(MountException e) {
    return e.getCause() instanceof SyscallException s && s.errno() == Errno.ENXIO;
  }

  private void onDevice(String device, long request) {
    withDevice(device, fd -> sys.ioctl(fd, request, 0));
  }

  private void withDevice(String device, IntConsumer call) {
    int fd = sys.open(checkDevice(device), O_RDONLY);
    try {
      call.accept(fd);
    } finally {
      sys.close(fd);
    }
  }

  /** Where sysfs shows the file {@code device} is bound to, while it is bound. */
  private Path backingFileEntry(String device) {
    return sysfs.resolve(Path.of(device).getFileName().toString()).resolve("loop/backing_file");
  }

  /** The file the device is bound to, by the path sysfs shows; empty when it is free. */
  private static Optional<Path> boundFile(Path backingFile) {
    if (!backingFile.toFile().exists()) {
      return Optional.empty();
    }
    try {
      return readBacking(backingFile).map(backing -> device("", backing).backingFile());
    } catch (IOException e) {
      throw MountException.failed("cannot read " + e.getMessage(), e);
    }
  }

  /**
   * LOOP_CLR_FD clears the device at once only when no one else has it open; otherwise it sets
   * LO_FLAGS_AUTOCLEAR and returns, and the kernel clears the device at the last close: a udev
   * probe, or a copy of the filesystem's mount in another mount namespace, which keeps the
   * filesystem (and so the device) open after our unmount. Usually the device is free when the
   * ioctl returns, so the first look ends the wait; else it is polled, briefly at first. A device
   * bound to another file by then was freed and taken by another volume: ours is done.
   */
  private void awaitDetached(String device, Path backingFile, Path file) {
    long deadline = System.nanoTime() + detachWait.toNanos();
    long pauseMillis = 1;
    while (boundFile(backingFile).filter(file::equals).isPresent()) {
      if (System.nanoTime() >= deadline) {
        throw MountException.busy(
            "loop device %s still holds %s %d ms after it was told to let go: something else has"
                + " it open (a mount of its filesystem in another mount namespace, or a process),"
                + " and the kernel detaches it at the last close; try again later",
            device, file, detachWait.toMillis());
      }
      try {
        Thread.sleep(pauseMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw MountException.failed(
            "interrupted while waiting for loop device " + device + " to let go of " + file, e);
      }
      pauseMillis = Math.min(pauseMillis * 2, MAX_PAUSE_MILLIS);
    }
  }

  private static String checkDevice(String device) {
    if (!device.matches("/dev/loop[0-9]+")) {
      throw new IllegalArgumentException("not a loop device: " + device);
    }
    return device;
  }
}

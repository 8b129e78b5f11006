package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@link Losetup} on devices whose backing file the kernel no longer names by the image's
 * path: attached through a bind mount in a mount namespace that is gone (a driver container that
 * was killed), the kernel prints the path relative to that mount, e.g. {@code /images/vol-a.img}.
 * Fails (never skips) without root and loop devices.
 */
class LoopIdentityIT {
  private static final long MIB = 1 << 20;

  @TempDir Path dir;
  final Exec exec = new ProcessExec();
  final Losetup loops = new Losetup();
  final List<String> devices = new ArrayList<>();
  Path pool;
  Path image;

  @BeforeEach
  void image() throws IOException {
    assertThat(Path.of("/dev/loop-control")).as("loop devices and root are required").exists();
    pool = Files.createDirectories(dir.resolve("pool"));
    image = Files.createDirectories(pool.resolve("images")).resolve("vol-a.img");
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
      file.setLength(16 * MIB);
    }
  }

  @AfterEach
  void detach() {
    for (String device : devices) {
      exec.run(List.of("losetup", "--detach", device), Exec.SHORT);
    }
  }

  /**
   * Attaches {@code image} the way a driver in its own container does: through the pool
   * bind-mounted at another path, in a mount namespace that ends with the command.
   */
  private String attachThroughAMountThatIsGone() throws IOException {
    Path view = Files.createDirectories(dir.resolve("container-view"));
    Path seen = view.resolve(pool.relativize(image));
    String device =
        exec.check(
                List.of(
                    "unshare",
                    "--mount",
                    "--propagation",
                    "private",
                    "sh",
                    "-ec",
                    "mount --bind \"$1\" \"$2\"; losetup --find --show \"$3\"",
                    "sh",
                    pool.toString(),
                    view.toString(),
                    seen.toString()),
                Exec.SHORT)
            .stdout()
            .strip();
    devices.add(device);
    return device;
  }

  private String shownBackingFile(String device) throws IOException {
    Path file =
        Path.of("/sys/block", Path.of(device).getFileName().toString(), "loop/backing_file");
    return Files.readString(file).strip();
  }

  @Test
  void aDeviceAttachedThroughAMountThatIsGoneStillHoldsItsImage() throws IOException {
    String device = attachThroughAMountThatIsGone();
    assertThat(shownBackingFile(device))
        .as("the kernel names the file relative to the vanished mount")
        .isEqualTo("/images/vol-a.img");

    assertThat(loops.devicesHolding(image)).containsExactly(device);
    assertThat(loops.devicesFor(image)).containsExactly(device);
  }

  @Test
  void anImageRecreatedWhereADeletedOneWasIsNotHeldByTheOldDevice() throws IOException {
    String device = attachThroughAMountThatIsGone();
    Files.delete(image);
    assertThat(shownBackingFile(device)).isEqualTo("/images/vol-a.img (deleted)");
    Files.write(image, new byte[4096]);

    assertThat(loops.devicesFor(image)).isEmpty();
    assertThat(loops.devicesHolding(image)).isEmpty();
  }

  @Test
  void aDeletedImageIsStillHeldByTheDeviceAttachedAtItsPath() throws IOException {
    String device = loops.attach(image);
    devices.add(device);
    Files.delete(image);

    assertThat(loops.devicesFor(image)).isEmpty();
    assertThat(loops.devicesHolding(image)).containsExactly(device);
  }

  @Test
  void anImageAttachedReadOnlyByAnotherToolIsStillFound() {
    // Soko attaches read-write; losetup -r leaves the file open for reading only, which a read
    // lease (F_RDLCK) would not notice: only the write lease counts readers too.
    String device =
        exec.check(
                List.of("losetup", "--read-only", "--find", "--show", image.toString()), Exec.SHORT)
            .stdout()
            .strip();
    devices.add(device);

    assertThat(loops.devicesFor(image)).containsExactly(device);
  }

  @Test
  void anImageNoDeviceHoldsIsFreeAgainOnceItsDeviceIsDetached() {
    String device = loops.attach(image, 0);
    assertThat(loops.devicesFor(image)).containsExactly(device);
    loops.detach(device);

    assertThat(loops.devicesFor(image)).isEmpty();
  }
}

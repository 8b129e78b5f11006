package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LosetupTest {
  @TempDir Path sysfs;
  final FakeExec exec = new FakeExec();
  Losetup losetup;

  @BeforeEach
  void setUp() {
    losetup = new Losetup(exec, sysfs); // an empty sysfs: every detach is complete at once
  }

  /** Lays out /sys/block/NAME/loop/backing_file as the kernel does for an attached device. */
  private void attached(String name, String backing) throws IOException {
    Path loop = Files.createDirectories(sysfs.resolve(name).resolve("loop"));
    Files.writeString(loop.resolve("backing_file"), backing + "\n");
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
    assertThat(exec.calls()).as("no process is spawned to list").isEmpty();
  }

  @Test
  void findsAttachmentsOfAnImage() throws IOException {
    attached("loop1", "/pool/images/vol-a.img");
    attached("loop0", "/pool/images/vol-b.img (deleted)");
    assertThat(losetup.devicesFor(Path.of("/pool/images/vol-a.img"))).containsExactly("/dev/loop1");
    assertThat(losetup.devicesFor(Path.of("/pool/images/vol-b.img"))).isEmpty();
  }

  @Test
  void noSysfsMeansNoDevices() {
    assertThat(new Losetup(exec, sysfs.resolve("absent")).list()).isEmpty();
  }

  @Test
  void attachReturnsTheDeviceLosetupPrinted() {
    exec.on(List.of("losetup", "--find"), 0, "/dev/loop7\n", "");
    assertThat(losetup.attach(Path.of("/pool/images/vol-a.img"))).isEqualTo("/dev/loop7");
    assertThat(exec.callsOf("losetup"))
        .containsExactly("losetup --find --show -- /pool/images/vol-a.img");
    exec.on(List.of("losetup", "--find"), 0, "", "");
    assertThatThrownBy(() -> losetup.attach(Path.of("/x.img")))
        .isInstanceOf(StorageException.class);
  }

  @Test
  void refreshAndDetachOnlyTakeLoopDevices() {
    losetup.refreshSize("/dev/loop3");
    losetup.detach("/dev/loop3");
    assertThat(exec.callsOf("losetup"))
        .containsExactly("losetup --set-capacity /dev/loop3", "losetup --detach /dev/loop3");
    assertThatThrownBy(() -> losetup.detach("/dev/sda"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}

package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.volume.StorageException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LosetupTest {
  static final String LIST =
      """
      {
         "loopdevices": [
            {
               "name": "/dev/loop1",
               "sizelimit": 0,
               "autoclear": false,
               "back-file": "/pool/images/vol-a.img",
               "dio": true
            },{
               "name": "/dev/loop0",
               "back-file": "/pool/images/vol-b.img (deleted)",
               "dio": false
            }
         ]
      }
      """;

  @TempDir Path sysfs;
  final FakeExec exec = new FakeExec();
  Losetup losetup;

  @BeforeEach
  void setUp() {
    losetup = new Losetup(exec, sysfs); // an empty sysfs: every detach is complete at once
  }

  @Test
  void parsesDevicesAndDeletedBackingFiles() {
    assertThat(Losetup.parse(LIST))
        .containsExactly(
            new LoopDevice("/dev/loop1", Path.of("/pool/images/vol-a.img"), false),
            new LoopDevice("/dev/loop0", Path.of("/pool/images/vol-b.img"), true));
    assertThat(Losetup.parse("")).isEmpty();
  }

  @Test
  void findsAttachmentsOfAnImage() {
    exec.on(List.of("losetup", "--list"), 0, LIST, "");
    assertThat(losetup.devicesFor(Path.of("/pool/images/vol-a.img"))).containsExactly("/dev/loop1");
    assertThat(losetup.devicesFor(Path.of("/pool/images/vol-b.img"))).isEmpty();
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

package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class KubeletTargetsTest {
  private static final String UID = "0f5b2c1e-7d1a-4c1b-9d5e-3f2a1b0c9d8e";

  @ParameterizedTest
  @CsvSource({
    "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~csi/pvc-1/mount",
    "/data/k/pods/" + UID + "/volumes/kubernetes.io~csi/pvc-1/mount",
    "/var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/publish/pvc-1/" + UID,
  })
  void aTargetInTheKubeletsLayoutNamesItsPod(String target) {
    assertThat(KubeletTargets.podUid(Path.of(target))).contains(UID);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/var/lib/kubelet/plugins/kubernetes.io/csi/csi.soko.dev/0123abcd/globalmount",
        "/var/lib/kubelet/pods/not-a-uid/volumes/kubernetes.io~csi/pvc-1/mount",
        "/var/lib/kubelet/pods/" + UID,
        "/tmp/csi-sanity/target",
        "/var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/staging/pvc-1/" + UID,
        "/"
      })
  void anyOtherPathNamesNone(String target) {
    assertThat(KubeletTargets.podUid(Path.of(target))).isEmpty();
  }
}

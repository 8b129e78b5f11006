package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import dev.soko.driver.testing.Await;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Encrypted volumes (StorageClass parameter {@code encryption: fscrypt}) through the real jar over
 * its socket, on an image-file pool, with real loop devices, ext4 and this kernel's fscrypt: what a
 * pod writes is not in the raw image; the key comes from the node-stage secrets, and a missing,
 * malformed or wrong key is refused with FAILED_PRECONDITION leaving the volume as it was; a
 * restore of a snapshot keeps the encryption and reads the same bytes with the same key; a repeated
 * stage and one after a kill -9 of the driver keep the volume usable; and no byte of the key is in
 * the driver's log (at debug) or in its records and journal. Needs root.
 */
class EncryptedVolumeIT {
  private static final long MIB = 1L << 20;
  private static final Csi.VolumeCapability EXT4 = Requests.mount("ext4");
  private static final String FIELD = "encryptionKey";
  private static final String MARKER = "soko-fscrypt-marker-5f2c9d";

  private final byte[] key = randomKey();
  private final String keyText = Base64.getEncoder().encodeToString(key);

  private Path root;
  private DriverJar driver;
  private CsiClient csi;

  @BeforeEach
  void start() throws Exception {
    root = Files.createTempDirectory("soko-enc-");
    driver = new DriverJar(root);
    csi = startDriver();
  }

  private CsiClient startDriver() throws Exception {
    return driver.startWithPools(
        List.of("name=img,path=" + driver.pool + ",capacity=2Gi"), List.of("--log-level", "debug"));
  }

  @AfterEach
  void stop() throws Exception {
    driver.close();
    HostState.release(root);
  }

  @Test
  void aMarkerIsNotInTheRawImageAndARestoreWithTheKeyReadsTheSameBytes() throws Exception {
    Csi.Volume volume = create("secret", Map.of("encryption", "fscrypt"));
    Path image = image(volume);

    refused(volume, Map.of(), "Secret was not given", FIELD);
    refused(volume, Map.of("other", "unrelated-value-7a1"), "has no field " + FIELD);
    refused(volume, Map.of(FIELD, "not base64!"), FIELD, "not base64");
    refused(volume, Map.of(FIELD, Base64.getEncoder().encodeToString(new byte[32])), "32 bytes");
    assertThat(exitCode("blkid", "-p", image.toString()))
        .as("a refused stage makes no filesystem")
        .isEqualTo(2);
    assertThat(HostState.mountsUnder(staging(volume))).isEmpty();

    stage(volume, key);
    stage(volume, key); // the kubelet repeats a stage: the same
    Path target = publish(volume);
    try (Stream<Path> seen = Files.list(target)) {
      assertThat(seen.toList()).as("pods see the encrypted directory, not lost+found").isEmpty();
    }
    byte[] content = (MARKER + "\n").repeat(4096).getBytes(StandardCharsets.UTF_8);
    Files.write(target.resolve(MARKER + ".txt"), content);
    HostState.check("sync");
    String sha = sha256(target.resolve(MARKER + ".txt"));
    Csi.Snapshot snapshot =
        csi.controller()
            .createSnapshot(Requests.createSnapshot("secret-snap", volume.getVolumeId()))
            .getSnapshot();

    driver.kill(); // with the key loaded
    csi = startDriver();
    stage(volume, key);
    assertThat(sha256(target.resolve(MARKER + ".txt"))).isEqualTo(sha);
    teardown(volume);
    assertThat(contains(Files.readAllBytes(image), MARKER.getBytes(StandardCharsets.UTF_8)))
        .as("the marker, as content or as a file name, in the raw image")
        .isFalse();

    // Restored by a class that does not ask for encryption: the copy is encrypted all the same.
    Csi.Volume restored =
        csi.controller()
            .createVolume(
                Requests.restoreVolume("restored", 64 * MIB, EXT4, snapshot.getSnapshotId()))
            .getVolume();
    refused(restored, Map.of(), "Secret was not given", FIELD);
    StatusRuntimeException wrong = refused(restored, secrets(randomKey()), "is not the key");
    assertThat(HostState.mountsUnder(staging(restored))).as("a wrong key is not mounted").isEmpty();
    assertThat(wrong.getStatus().getDescription()).doesNotContain(keyText);

    stage(restored, key);
    // Grown while staged and unpublished: never by taking the staging mount down, which would lose
    // the key. Online where the driver may grow a mounted ext4 (CAP_SYS_RESOURCE), else refused
    // and grown unmounted by the next stage.
    csi.controller()
        .controllerExpandVolume(
            Csi.ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(restored.getVolumeId())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(128 * MIB))
                .setVolumeCapability(EXT4)
                .build());
    try {
      csi.node()
          .nodeExpandVolume(
              Csi.NodeExpandVolumeRequest.newBuilder()
                  .setVolumeId(restored.getVolumeId())
                  .setVolumePath(staging(restored).toString())
                  .setStagingTargetPath(staging(restored).toString())
                  .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(128 * MIB))
                  .build());
    } catch (StatusRuntimeException e) {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(e.getStatus().getDescription()).contains("CAP_SYS_RESOURCE");
    }
    Path restoredTarget = publish(restored);
    assertThat(sha256(restoredTarget.resolve(MARKER + ".txt"))).isEqualTo(sha);
    teardown(restored);
    stage(restored, key);
    restoredTarget = publish(restored);
    assertThat(Files.getFileStore(restoredTarget).getTotalSpace()).isGreaterThan(100 * MIB);
    assertThat(sha256(restoredTarget.resolve(MARKER + ".txt"))).isEqualTo(sha);
    teardown(restored);

    assertNoByteOfTheKey();
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshot.getSnapshotId()));
    delete(restored);
    delete(volume);
  }

  @Test
  void onlyExt4FilesystemVolumesCanBeEncrypted() {
    for (Csi.VolumeCapability capability : List.of(Requests.mount("xfs"), Requests.block())) {
      StatusRuntimeException e =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () ->
                  csi.controller()
                      .createVolume(
                          Requests.createVolume("plain", 64 * MIB, capability).toBuilder()
                              .putParameters("encryption", "fscrypt")
                              .build()));
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(e.getStatus().getDescription()).contains("cannot be encrypted", "dm-crypt");
    }
    StatusRuntimeException other =
        catchThrowableOfType(
            StatusRuntimeException.class, () -> create("luks", Map.of("encryption", "luks")));
    assertThat(other.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(other.getStatus().getDescription()).contains("encryption must be fscrypt");
  }

  @Test
  void aVolumeWithoutEncryptionIsPresentedAsBefore() throws Exception {
    Csi.Volume volume = create("plain", Map.of());
    csi.node()
        .nodeStageVolume(
            Requests.stage(volume, staging(volume).toString(), EXT4).toBuilder()
                .putAllSecrets(secrets(key))
                .build());
    Path target = publish(volume);
    assertThat(Files.exists(target.resolve("lost+found"))).isTrue();
    teardown(volume);
    delete(volume);
  }

  /** One DeleteVolume: an unstage that answered OK has let go of the volume's image. */
  private void delete(Csi.Volume volume) {
    csi.controller().deleteVolume(Requests.deleteVolume(volume.getVolumeId()));
  }

  private Csi.Volume create(String name, Map<String, String> parameters) {
    return csi.controller()
        .createVolume(
            Requests.createVolume(name, 64 * MIB, EXT4).toBuilder()
                .putAllParameters(parameters)
                .build())
        .getVolume();
  }

  private Map<String, String> secrets(byte[] raw) {
    return Map.of(FIELD, Base64.getEncoder().encodeToString(raw));
  }

  private void stage(Csi.Volume volume, byte[] raw) {
    csi.node()
        .nodeStageVolume(
            Requests.stage(volume, staging(volume).toString(), EXT4).toBuilder()
                .putAllSecrets(secrets(raw))
                .build());
  }

  private StatusRuntimeException refused(
      Csi.Volume volume, Map<String, String> secrets, String... says) {
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                csi.node()
                    .nodeStageVolume(
                        Requests.stage(volume, staging(volume).toString(), EXT4).toBuilder()
                            .putAllSecrets(secrets)
                            .build()));
    assertThat(e).as("stage with secrets %s", secrets.keySet()).isNotNull();
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(e.getStatus().getDescription()).contains(says);
    secrets.values().forEach(v -> assertThat(e.getStatus().getDescription()).doesNotContain(v));
    return e;
  }

  private Path publish(Csi.Volume volume) {
    Path target = driver.mounts.resolve("target-" + volume.getVolumeId());
    csi.node()
        .nodePublishVolume(
            Requests.publish(volume, staging(volume).toString(), target.toString(), EXT4));
    return target;
  }

  private void teardown(Csi.Volume volume) throws InterruptedException {
    Path target = driver.mounts.resolve("target-" + volume.getVolumeId());
    csi.node().nodeUnpublishVolume(Requests.unpublish(volume.getVolumeId(), target.toString()));
    unstageAsTheKubeletDoes(volume);
  }

  /**
   * NodeUnstageVolume, retried on UNAVAILABLE for a bounded time as the kubelet retries it: the
   * driver answers so while something else still holds the volume's loop device (the kernel frees
   * it at the last close), and OK only once the image is free.
   */
  private void unstageAsTheKubeletDoes(Csi.Volume volume) throws InterruptedException {
    Await.until(
        "volume " + volume.getVolumeId() + " unstaged",
        Duration.ofSeconds(90),
        () -> {
          try {
            csi.node()
                .nodeUnstageVolume(
                    Requests.unstage(volume.getVolumeId(), staging(volume).toString()));
            return true;
          } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
              throw e;
            }
            return false;
          }
        });
  }

  private Path staging(Csi.Volume volume) {
    return driver.mounts.resolve("staging-" + volume.getVolumeId());
  }

  private Path image(Csi.Volume volume) throws IOException {
    try (Stream<Path> files = Files.walk(driver.pool)) {
      return files
          .filter(p -> p.getFileName().toString().startsWith(volume.getVolumeId()))
          .filter(Files::isRegularFile)
          .findFirst()
          .orElseThrow();
    }
  }

  /** The key, as raw bytes, its base64 text or hex, in no log line, record or journal. */
  private void assertNoByteOfTheKey() throws IOException {
    List<byte[]> forms =
        List.of(
            key,
            keyText.getBytes(StandardCharsets.UTF_8),
            HexFormat.of().formatHex(key).getBytes(StandardCharsets.UTF_8));
    List<Path> files = new ArrayList<>();
    files.add(root.resolve("driver.log"));
    try (Stream<Path> state = Files.walk(driver.pool)) {
      state
          .filter(Files::isRegularFile)
          .filter(p -> !p.toString().endsWith(".img"))
          .forEach(files::add);
    }
    assertThat(files).hasSizeGreaterThan(2);
    assertThat(driver.log()).contains("added").contains("removed");
    for (Path file : files) {
      byte[] bytes = Files.readAllBytes(file);
      for (byte[] form : forms) {
        assertThat(contains(bytes, form)).as("the key in %s", file).isFalse();
      }
    }
  }

  private static int exitCode(String... command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    process.getInputStream().readAllBytes();
    return process.waitFor();
  }

  private static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  private static byte[] randomKey() {
    byte[] raw = new byte[64];
    new SecureRandom().nextBytes(raw);
    return raw;
  }
}

package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The real driver jar started on a pool a newer release has moved to an on-disk format it does not
 * read (what a downgrade below that release does): it refuses the pool with a message that says so,
 * stays unready, takes no volume and changes no file of the pool; once the pool is in a format it
 * reads again, the same process opens it and serves the volume it holds.
 */
class DowngradeRefusalIT {
  private static final long MIB = 1024 * 1024;

  private Path root;
  private DriverJar driver;

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createTempDirectory("soko-downgrade-");
    driver = new DriverJar(root);
  }

  @AfterEach
  void tearDown() throws Exception {
    driver.close();
    HostState.release(root);
  }

  @Test
  void aPoolInANewerFormatIsRefusedUntouchedAndServedOnceItsFormatIsReadable() throws Exception {
    CsiClient first = driver.start();
    String volumeId =
        first
            .controller()
            .createVolume(Requests.createVolume("kept", 16 * MIB, Requests.mount("ext4")))
            .getVolume()
            .getVolumeId();
    driver.stop();
    Path format = driver.pool.resolve(".soko/format");
    assertThat(Files.readString(format)).as("the pool carries its format").isEqualTo("1\n");
    Files.writeString(format, "2\n");
    Map<Path, String> before = contents(driver.pool);

    driver.launch(List.of());
    CsiClient csi = new CsiClient(driver.socket);
    assertThat(csi.awaitReady(driver.socket, Duration.ofSeconds(20)))
        .as("a driver whose only pool it cannot read is not ready")
        .isFalse();
    assertThat(driver.log())
        .contains(
            "pool default is in on-disk format 2, written by a newer Soko; this driver reads"
                + " formats up to 1. The downgrade is refused");
    StatusRuntimeException refused =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                csi.controller()
                    .createVolume(Requests.createVolume("new", 16 * MIB, Requests.mount("ext4"))));
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(contents(driver.pool)).as("no file of the refused pool changed").isEqualTo(before);

    Files.writeString(format, "1\n");
    assertThat(csi.awaitReady(driver.socket, Duration.ofSeconds(30)))
        .as("the pool opens at the next readiness check once its format is readable")
        .isTrue();
    csi.controller().deleteVolume(Requests.deleteVolume(volumeId));
    assertThat(driver.pool.resolve("images/" + volumeId + ".img")).doesNotExist();
    csi.close();
  }

  /** Every regular file under {@code dir} with its content, by path. */
  private static Map<Path, String> contents(Path dir) throws IOException {
    Map<Path, String> files = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path file : walk.filter(Files::isRegularFile).toList()) {
        files.put(
            dir.relativize(file),
            file.getFileName().toString().endsWith(".img")
                ? Files.size(file) + " bytes"
                : Files.readString(file, StandardCharsets.ISO_8859_1));
      }
    }
    return files;
  }
}

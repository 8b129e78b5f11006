package dev.soko.driver.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubeApiTest {
  @TempDir Path dir;

  @Test
  void inAPodItTalksToTheServiceHostOverTls() throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");

    KubeApi api =
        KubeApi.fromEnvironment(
                Map.of(
                    "KUBERNETES_SERVICE_HOST",
                    "10.96.0.1",
                    "KUBERNETES_SERVICE_PORT",
                    "6443",
                    "SOKO_KUBE_TOKEN_FILE",
                    token.toString(),
                    "SOKO_KUBE_CA_FILE",
                    dir.resolve("none.crt").toString()))
            .orElseThrow();

    assertThat(api.server()).hasToString("https://10.96.0.1:6443");
  }

  @Test
  void anIpv6ServiceHostIsBracketed() throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");

    KubeApi api =
        KubeApi.fromEnvironment(
                Map.of(
                    "KUBERNETES_SERVICE_HOST", "fd00::1",
                    "SOKO_KUBE_TOKEN_FILE", token.toString(),
                    "SOKO_KUBE_CA_FILE", dir.resolve("none.crt").toString()))
            .orElseThrow();

    assertThat(api.server()).hasToString("https://[fd00::1]:443");
  }

  @Test
  void outsideAClusterOrWithoutATokenOrWhenSwitchedOffThereIsNoReport() throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");

    assertThat(KubeApi.fromEnvironment(Map.of("SOKO_KUBE_TOKEN_FILE", token.toString())))
        .as("no server")
        .isEmpty();
    assertThat(
            KubeApi.fromEnvironment(
                Map.of(
                    "SOKO_KUBE_API",
                    "http://127.0.0.1:1",
                    "SOKO_KUBE_TOKEN_FILE",
                    dir.resolve("missing").toString())))
        .as("no token")
        .isEmpty();
    assertThat(
            KubeApi.fromEnvironment(
                Map.of(
                    "SOKO_KUBE_API", "http://127.0.0.1:1",
                    "SOKO_KUBE_TOKEN_FILE", token.toString(),
                    "SOKO_POOL_REPORT", "off")))
        .as("switched off")
        .isEmpty();
  }

  @Test
  void aCaFileWithoutCertificatesIsAnError() throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    Path ca = Files.writeString(dir.resolve("ca.crt"), "not a certificate");

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                KubeApi.fromEnvironment(
                    Map.of(
                        "SOKO_KUBE_API", "https://127.0.0.1:6443",
                        "SOKO_KUBE_TOKEN_FILE", token.toString(),
                        "SOKO_KUBE_CA_FILE", ca.toString())))
        .isInstanceOf(java.io.IOException.class)
        .hasMessageContaining("ca.crt");
  }
}

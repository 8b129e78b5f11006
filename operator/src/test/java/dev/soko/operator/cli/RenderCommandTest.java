package dev.soko.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RenderCommandTest {
  @TempDir Path dir;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int render(String file, String version) throws Exception {
    return render(file, version, null);
  }

  private int render(String file, String version, String registry) throws Exception {
    return RenderCommand.render(
        file,
        version,
        registry,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void rendersEveryObjectAsYaml() throws Exception {
    Path file = dir.resolve("stc.yaml");
    try (var in = getClass().getResourceAsStream("/storagecluster-sample.yaml")) {
      Files.copy(in, file);
    }
    assertThat(render(file.toString(), "1.34.2")).isZero();
    String yaml = out.toString(StandardCharsets.UTF_8);
    for (String kind :
        new String[] {
          "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
          "RoleBinding", "CSIDriver", "DaemonSet", "Deployment", "StorageClass",
          "VolumeSnapshotClass", "VolumeGroupSnapshotClass"
        }) {
      assertThat(yaml).contains("kind: \"" + kind + "\"");
    }
    // No registry anywhere: the table's repository paths are printed unqualified.
    assertThat(yaml).contains("image: \"sig-storage/csi-provisioner:v6.4.0\"");
  }

  /**
   * Keys and the CA are issued at run time: the render prints the snapshot metadata sidecar and its
   * Service but not its Secret nor the SnapshotMetadataService (whose caCert is the CA), and says
   * so beside the data path's Secrets.
   */
  @Test
  void printsNoKeyAndSaysWhatItLeavesOut() throws Exception {
    assertThat(render(sample(null).toString(), "1.34")).isZero();
    String yaml = out.toString(StandardCharsets.UTF_8);
    assertThat(yaml)
        .contains("name: \"csi-snapshot-metadata\"", "name: \"fast-snapshot-metadata\"")
        .doesNotContain("kind: \"Secret\"", "SnapshotMetadataService", "caCert", "PRIVATE KEY");
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            "note: not printed, issued at run time by the operator's CA: Secrets fast-data-ca,"
                + " fast-node-data-tls, fast-controller-data-tls, fast-snapshot-metadata-tls and"
                + " the SnapshotMetadataService fast.csi.soko.dev (its caCert)\n");
  }

  private Path sample(String driverRegistration) throws Exception {
    String yaml;
    try (var in = getClass().getResourceAsStream("/storagecluster-sample.yaml")) {
      yaml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    if (driverRegistration != null) {
      yaml = yaml.replace("    logLevel: debug\n", "    logLevel: debug\n" + driverRegistration);
    }
    Path file = dir.resolve("stc.yaml");
    Files.writeString(file, yaml);
    return file;
  }

  @Test
  void rendersBuiltInRegistrationByDefaultWithoutRegistrarOrLivenessProbe() throws Exception {
    assertThat(render(sample(null).toString(), "1.34")).isZero();
    String yaml = out.toString(StandardCharsets.UTF_8);
    assertThat(yaml)
        .contains(
            "- \"--kubelet-registration-path=/var/lib/kubelet/plugins/fast.csi.soko.dev/csi.sock\"",
            "- \"--registration-dir=/registration\"",
            "- \"--health-address=0.0.0.0:9808\"",
            "pod-security.kubernetes.io/enforce: \"privileged\"")
        .doesNotContain("node-driver-registrar", "livenessprobe", "liveness-probe");
  }

  @Test
  void rendersSidecarRegistrationWithRegistrarAndLivenessProbe() throws Exception {
    assertThat(render(sample("    registration: Sidecars\n").toString(), "1.34")).isZero();
    String yaml = out.toString(StandardCharsets.UTF_8);
    assertThat(yaml)
        .contains(
            "name: \"node-driver-registrar\"",
            "image: \"sig-storage/csi-node-driver-registrar:v2.17.0\"",
            "- \"--http-endpoint=:9809\"",
            "name: \"liveness-probe\"",
            "image: \"sig-storage/livenessprobe:v2.19.0\"",
            "- \"--http-endpoint=:9808\"")
        .doesNotContain("--health-address", "--registration-dir");
  }

  @Test
  void refusesSidecarRegistrationWithMetricsOnTheRegistrarsHealthPort() throws Exception {
    Path file = sample("    registration: Sidecars\n    metricsPort: 9809\n");
    assertThat(render(file.toString(), "1.34")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("driver.metricsPort must not be 9809");
  }

  @Test
  void qualifiesImagesWithTheDefaultRegistry() throws Exception {
    Path file = dir.resolve("stc.yaml");
    try (var in = getClass().getResourceAsStream("/storagecluster-sample.yaml")) {
      Files.copy(in, file);
    }
    assertThat(render(file.toString(), "1.34", "registry.example/k8s/")).isZero();
    String yaml = out.toString(StandardCharsets.UTF_8);
    assertThat(yaml)
        .contains("image: \"registry.example/k8s/sig-storage/csi-provisioner:v6.4.0\"")
        .containsPattern("image: \"registry.example/k8s/soko-driver:[^\"]+\"");
  }

  @Test
  void rejectsBadVersionAndInvalidSpecReadably() throws Exception {
    Path file = dir.resolve("bad.yaml");
    Files.writeString(
        file,
        "apiVersion: soko.dev/v1alpha1\nkind: StorageCluster\nmetadata: {name: x}\n"
            + "spec:\n  pools: [{name: a, path: /a}]\n"
            + "  storageClasses: [{name: c, pool: b}]\n");
    assertThat(render(file.toString(), "1.34")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("storage class 'c' names unknown pool 'b'");
    assertThat(render(file.toString(), "latest")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("not a Kubernetes version");
  }

  /** No API server checks a file: render refuses one without spec itself, as the schema would. */
  @Test
  void refusesAFileWithoutSpec() throws Exception {
    Path file = dir.resolve("no-spec.yaml");
    Files.writeString(
        file, "apiVersion: soko.dev/v1alpha1\nkind: StorageCluster\nmetadata: {name: x}\n");
    assertThat(render(file.toString(), "1.34")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("error: spec is missing\n");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
  }
}

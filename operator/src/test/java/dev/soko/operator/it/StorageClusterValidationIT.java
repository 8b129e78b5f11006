package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The CRD's schema and CEL rules reject invalid specs at admission, with readable messages. */
class StorageClusterValidationIT {
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
  }

  private static final String POOL = "{name: main, path: /var/lib/soko/main}";

  static Stream<Arguments> invalidSpecs() {
    return Stream.of(
        Arguments.of("no pools", "pools: []", "spec.pools"),
        Arguments.of(
            "bad quantity",
            "pools: [{name: main, path: /p, capacity: 10 GB}]",
            "must be a quantity of bytes"),
        Arguments.of(
            "duplicate pools", "pools: [" + POOL + ", " + POOL + "]", "pool names must be unique"),
        Arguments.of(
            "duplicate classes",
            "pools: [" + POOL + "]\nstorageClasses: [{name: a, pool: main}, {name: a, pool: main}]",
            "storage class names must be unique"),
        Arguments.of(
            "unknown pool",
            "pools: [" + POOL + "]\nstorageClasses: [{name: a, pool: nope}]",
            "every storage class must name a pool listed in spec.pools"),
        Arguments.of(
            "two defaults",
            "pools: ["
                + POOL
                + "]\nstorageClasses: [{name: a, pool: main, default: true},"
                + " {name: b, pool: main, default: true}]",
            "at most one storage class may be marked default"),
        Arguments.of(
            "invalid driver name",
            "driver: {name: Bad_Name}\npools: [" + POOL + "]",
            "must be a DNS subdomain"),
        Arguments.of(
            "negative replicas",
            "controller: {replicas: -1}\npools: [" + POOL + "]",
            "replicas must not be negative"),
        Arguments.of(
            "relative pool path",
            "pools: [{name: main, path: relative/dir}]",
            "must be an absolute path"),
        Arguments.of(
            "bad pool name", "pools: [{name: Main_Pool, path: /p}]", "must be lower case letters"),
        Arguments.of(
            "overprovision below 1",
            "pools: [{name: main, path: /p, overprovisionRatio: 0.5}]",
            "overprovisionRatio"),
        Arguments.of(
            "unknown fs type",
            "pools: [" + POOL + "]\nstorageClasses: [{name: a, pool: main, fsType: btrfs}]",
            "Unsupported value: \"btrfs\""),
        Arguments.of(
            "fs type not allowed by pool",
            "pools: [{name: main, path: /p, fsTypes: [ext4]}]\n"
                + "storageClasses: [{name: a, pool: main, fsType: xfs}]",
            "a storage class fsType must be one of its pool's fsTypes"),
        Arguments.of(
            "bad namespace",
            "namespace: Soko_NS\npools: [" + POOL + "]",
            "must be a valid namespace name"),
        Arguments.of(
            "bad uninstall policy",
            "uninstallPolicy: Sometimes\npools: [" + POOL + "]",
            "Unsupported value: \"Sometimes\""),
        Arguments.of(
            "registry with scheme",
            "images: {registry: 'https://registry.example'}\npools: [" + POOL + "]",
            "without scheme"),
        Arguments.of(
            "comma in pool path (it would split the driver's --pool flag)",
            "pools: [{name: main, path: '/p,capacity=1Ti'}]",
            "without '..' or ','"),
        Arguments.of(
            "metrics port on the health port",
            "driver: {metricsPort: 9808}\npools: [" + POOL + "]",
            "health port"),
        Arguments.of(
            "unknown registration mode",
            "driver: {registration: Kubelet}\npools: [" + POOL + "]",
            "Unsupported value: \"Kubelet\""),
        Arguments.of(
            "metrics port on the registrar's health port with sidecars",
            "driver: {registration: Sidecars, metricsPort: 9809}\npools: [" + POOL + "]",
            "driver.metricsPort must not be 9809"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidSpecs")
  void rejected(String what, String specYaml, String message) {
    GenericKubernetesResource sc = storageCluster("invalid", specYaml);
    assertThatThrownBy(() -> cluster.admin.resource(sc).create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .hasMessageContaining(message);
  }

  @Test
  void validSpecGetsDefaults() {
    GenericKubernetesResource sc =
        storageCluster(
            "valid-defaults", "pools: [" + POOL + "]\nstorageClasses: [{name: vd, pool: main}]");
    try {
      GenericKubernetesResource created = cluster.admin.resource(sc).create();
      String json = Serialization.asJson(created.getAdditionalProperties().get("spec"));
      assertThat(json)
          .contains("\"namespace\":\"soko-system\"")
          .contains("\"uninstallPolicy\":\"RefuseWhileVolumesExist\"")
          .contains("\"volumeBindingMode\":\"WaitForFirstConsumer\"")
          .contains("\"allowVolumeExpansion\":true");
    } finally {
      cluster.admin.resource(sc).delete();
    }
  }

  /** The API server defaults registration inside a given driver object (as the Java model does). */
  @Test
  void metricsOnTheRegistrarsHealthPortIsFineWithBuiltInRegistration() {
    GenericKubernetesResource sc =
        storageCluster("builtin-9809", "driver: {metricsPort: 9809}\npools: [" + POOL + "]");
    GenericKubernetesResource accepted = cluster.admin.resource(sc).dryRun().create();
    assertThat(Serialization.asJson(accepted.getAdditionalProperties().get("spec")))
        .contains("\"registration\":\"BuiltIn\"", "\"metricsPort\":9809");
  }

  /** The complete example in the docs must stay valid as the API evolves. */
  @Test
  void documentedExampleIsAccepted() throws Exception {
    Path example = Path.of("..", "docs", "examples", "storagecluster.yaml");
    GenericKubernetesResource sc =
        Serialization.unmarshal(Files.readString(example), GenericKubernetesResource.class);
    GenericKubernetesResource accepted = cluster.admin.resource(sc).dryRun().create();
    assertThat(Serialization.asJson(accepted.getAdditionalProperties().get("spec")))
        .as("server-side dry run of %s", example)
        .contains("\"name\":\"soko-nvme\"")
        .contains("\"registry\":\"registry.example.internal/mirror\"");
  }

  private static GenericKubernetesResource storageCluster(String name, String specYaml) {
    String yaml =
        "apiVersion: soko.dev/v1alpha1\nkind: StorageCluster\nmetadata: {name: "
            + name
            + "}\nspec:\n  "
            + specYaml.replace("\n", "\n  ")
            + "\n";
    return Serialization.unmarshal(yaml, GenericKubernetesResource.class);
  }
}

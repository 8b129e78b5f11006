package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.ControllerSpec;
import dev.soko.api.v1alpha1.NodePluginSpec;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** What {@link SpecValidator} reports in status (InvalidSpec) and {@code render} prints. */
class SpecValidatorTest {
  @Test
  void aRequestAboveItsLimitIsReportedWithTheField() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setResources(requestAndLimit("cpu", "2", "500m"));
    sc.getSpec()
        .getNodePlugin()
        .setResources(Map.of("csi-provisioner", requestAndLimit("memory", "1Gi", "512Mi")));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "spec.driver.resources.requests.cpu (2) must not exceed spec.driver.resources.limits.cpu"
                + " (500m)",
            "spec.nodePlugin.resources.csi-provisioner.requests.memory (1Gi) must not exceed"
                + " spec.nodePlugin.resources.csi-provisioner.limits.memory (512Mi)");
  }

  @Test
  void equalRequestAndLimitInDifferentUnitsAreFine() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setResources(requestAndLimit("memory", "1Gi", "1024Mi"));
    assertThat(SpecValidator.problems(sc.getSpec())).isEmpty();
  }

  @Test
  void aKeyNamingNoRunningContainerIsReported() {
    StorageCluster sc = Fixtures.sample(); // registration BuiltIn
    ResourceRequirements r = requestAndLimit("cpu", "10m", "20m");
    sc.getSpec().getController().setResources(Map.of("csi-provisioner", r));
    sc.getSpec().getNodePlugin().setResources(Map.of("liveness-probe", r));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "spec.nodePlugin.resources names 'liveness-probe', which is no container these pods run"
                + " here; they run [csi-provisioner, csi-snapshotter, soko-driver]",
            "spec.controller.resources names 'csi-provisioner', which is no container these pods"
                + " run here; they run [csi-group-snapshotter, csi-resizer, csi-snapshot-metadata,"
                + " soko-driver]");
    StorageCluster sidecars = Fixtures.sidecars();
    sidecars.getSpec().getNodePlugin().setResources(Map.of("liveness-probe", r));
    sidecars.getSpec().getController().setResources(Map.of("liveness-probe", r));
    assertThat(SpecValidator.problems(sidecars.getSpec()))
        .as("liveness-probe with Sidecars")
        .isEmpty();
  }

  @Test
  void theGroupSnapshotterTakesResourcesOnlyWithSnapshots() {
    StorageCluster sc = Fixtures.sample();
    ResourceRequirements r = requestAndLimit("cpu", "10m", "20m");
    sc.getSpec().getController().setResources(Map.of(ControllerDeployment.GROUP_SNAPSHOTTER, r));
    assertThat(SpecValidator.problems(sc.getSpec())).isEmpty();
    sc.getSpec().getSnapshots().setEnabled(false);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .startsWith("spec.controller.resources names 'csi-group-snapshotter', which is no");
  }

  @Test
  void aZeroCapacityIsReportedNotReadAsAllTheSpace() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setCapacity("0Gi");
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .contains("spec.pools[].capacity", "must be greater than 0");
  }

  @Test
  void aCapacityBeyondTheDriversByteCountIsReported() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setCapacity("9Ei");
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .contains("exceeds 8Ei");
  }

  /** Offline render has no CRD rules: a ',' or ':' would change the driver's --pool flag. */
  @Test
  void aNodeSelectorThatIsNoLabelIsReportedNamingThePool() {
    StorageCluster sc = Fixtures.sample();
    PoolSpec pool = sc.getSpec().getPools().get(0);
    pool.setNodeSelector(Map.of("soko.dev/disk", "nvme,path=/"));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .contains("nodeSelector of pool 'nvme'", "no label value");
    pool.setNodeSelector(Map.of("disk:fast", "true"));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .contains("'disk:fast' is no label key");
    pool.setNodeSelector(Map.of("example.com/disk", "", "x", "A-b_c.9"));
    assertThat(SpecValidator.problems(sc.getSpec())).isEmpty();
  }

  @Test
  void twoPoolsOnOnePathAreReported() {
    StorageCluster sc = Fixtures.sample();
    PoolSpec second = new PoolSpec();
    second.setName("again");
    second.setPath(sc.getSpec().getPools().get(0).getPath());
    sc.getSpec().getPools().add(second);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .startsWith("spec.pools[].path must be unique");
  }

  /**
   * The keys the CRD accepts (its CEL lists, from the crd module's constants), the keys the
   * validator accepts and the containers the model renders are the same names.
   */
  @Test
  void resourceKeysAreTheRenderedContainers() {
    DesiredState d = Fixtures.desired(Fixtures.sidecars(), "1.36.3");
    Set<String> node =
        Fixtures.nodePod(d).getContainers().stream()
            .map(Container::getName)
            .collect(Collectors.toSet());
    Set<String> controller =
        Fixtures.controllerPod(d).getContainers().stream()
            .map(Container::getName)
            .collect(Collectors.toSet());
    assertThat(node)
        .isEqualTo(names(ResourceChecks.NODE))
        .isEqualTo(split(NodePluginSpec.CONTAINERS));
    assertThat(controller)
        .contains(ControllerDeployment.GROUP_SNAPSHOTTER)
        .isEqualTo(ResourceChecks.CONTROLLER)
        .isEqualTo(split(ControllerSpec.CONTAINERS));
  }

  /** The CRD's literal port rules are the ports the model gives the sidecars. */
  @Test
  void crdRefusesTheSidecarsPortsAsMetricsPort() throws Exception {
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/fabric8/storageclusters.soko.dev-v1.yml")) {
      CustomResourceDefinition crd = Serialization.unmarshal(in, CustomResourceDefinition.class);
      JSONSchemaProps port =
          crd.getSpec()
              .getVersions()
              .get(0)
              .getSchema()
              .getOpenAPIV3Schema()
              .getProperties()
              .get("spec")
              .getProperties()
              .get("driver")
              .getProperties()
              .get("metricsPort");
      assertThat(port.getXKubernetesValidations())
          .extracting(ValidationRule::getRule)
          .contains("self != " + Containers.HEALTH_PORT, "self != " + Containers.RESIZER_HTTP_PORT);
    }
  }

  private static Set<String> names(Set<Component> components) {
    return components.stream().map(Component::key).collect(Collectors.toSet());
  }

  private static Set<String> split(String list) {
    return Arrays.stream(list.split(", ")).collect(Collectors.toSet());
  }

  private static ResourceRequirements requestAndLimit(String name, String request, String limit) {
    return new ResourceRequirementsBuilder()
        .addToRequests(name, new Quantity(request))
        .addToLimits(name, new Quantity(limit))
        .build();
  }
}

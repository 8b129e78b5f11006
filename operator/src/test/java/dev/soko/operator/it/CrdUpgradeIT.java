package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.operator.crds.CrdDecision;
import dev.soko.operator.crds.CrdRelease;
import dev.soko.operator.crds.CrdUpgrade;
import dev.soko.operator.harness.Await;
import dev.soko.operator.harness.OperatorInstall;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code soko-operator run --upgrade-crds} against a real API server, as the operator's
 * ServiceAccount (so its RBAC, limited to Soko's CRDs by name, is what is tested): a NodeRequest
 * CRD older than the operator's is brought up to it and a field only the new schema has is then
 * kept; a newer one and the current ones are not written. The NodeRequest CRD is the one the other
 * ITs do not install; each test installs its own and deletes it.
 */
class CrdUpgradeIT {
  private static final String CRD = "noderequests.soko.dev";

  /** A field of the bundled NodeRequest schema that the "older" CRD of these tests lacks. */
  private static final String NEW_FIELD = "snapshotIds";

  /** A field the "older" CRD has and this build's does not: a release may drop one. */
  private static final String RETIRED_FIELD = "retired";

  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
  }

  @AfterEach
  void removeTheNodeRequestCrd() {
    crds().withName(CRD).delete();
    Await.until(
        CRD + " deleted", Duration.ofSeconds(60), () -> crds().withName(CRD).get(), c -> c == null);
  }

  /** 0.2.0 shipped its CRDs without the release annotation: that counts as older than any. */
  @Test
  void anOlderCrdIsUpgradedAndItsNewFieldIsThenKept() {
    install(older(null));
    assertThat(storedNewField("before")).as("pruned under the older schema").isNull();

    Map<String, Outcome> outcomes = upgrade();

    assertThat(outcomes.get(CRD).decision()).isEqualTo(CrdDecision.UPGRADE);
    assertThat(outcomes.get(CRD).installed()).isNull();
    CustomResourceDefinition upgraded = crds().withName(CRD).get();
    assertThat(upgraded.getMetadata().getAnnotations())
        .containsEntry(CrdRelease.ANNOTATION, bundledRelease());
    assertThat(specProperties(upgraded)).containsKey(NEW_FIELD).doesNotContainKey(RETIRED_FIELD);
    assertThat(upgraded.getSpec().getVersions().get(0).getSchema())
        .as("exactly this build's schema")
        .isEqualTo(bundled().getSpec().getVersions().get(0).getSchema());
    Await.until(
        "a NodeRequest keeps " + NEW_FIELD + " under the upgraded schema",
        () -> storedNewField("after"),
        ids -> ids != null);
  }

  @Test
  void aNewerCrdIsLeftAlone() {
    install(older("99.0.0"));
    String resourceVersion = crds().withName(CRD).get().getMetadata().getResourceVersion();

    Map<String, Outcome> outcomes = upgrade();

    assertThat(outcomes.get(CRD).decision()).isEqualTo(CrdDecision.NEWER);
    CustomResourceDefinition kept = crds().withName(CRD).get();
    assertThat(kept.getMetadata().getResourceVersion()).isEqualTo(resourceVersion);
    assertThat(specProperties(kept)).doesNotContainKey(NEW_FIELD);
  }

  /**
   * What keeps two operators starting at once from moving a CRD backwards: an apply that carries
   * the resourceVersion of a read is refused once the CRD changed since, and is compared again.
   */
  @Test
  void anApplyFromAStaleReadIsRefused() {
    install(older(null));
    CustomResourceDefinition stale = bundled();
    stale
        .getMetadata()
        .setResourceVersion(crds().withName(CRD).get().getMetadata().getResourceVersion());
    crds()
        .withName(CRD)
        .edit(
            c -> {
              c.getMetadata().setAnnotations(Map.of(CrdRelease.ANNOTATION, "99.0.0"));
              return c;
            });

    assertThatThrownBy(
            () ->
                cluster
                    .operator
                    .client()
                    .resource(stale)
                    .fieldManager("soko-operator")
                    .forceConflicts()
                    .serverSideApply())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(upgrade().get(CRD).decision()).isEqualTo(CrdDecision.NEWER);
  }

  /**
   * The StorageCluster and StorageNode CRDs the IT cluster installs are this build's: no write. A
   * CRD that is not installed is not created.
   */
  @Test
  void currentCrdsAreNotWrittenAndAMissingOneIsNotCreated() {
    Map<String, String> before = resourceVersions();

    Map<String, Outcome> outcomes = upgrade();

    assertThat(outcomes.get("storageclusters.soko.dev").decision()).isEqualTo(CrdDecision.CURRENT);
    assertThat(outcomes.get("storagenodes.soko.dev").decision()).isEqualTo(CrdDecision.CURRENT);
    assertThat(resourceVersions()).isEqualTo(before);
    assertThat(outcomes.get(CRD).decision()).isEqualTo(CrdDecision.MISSING);
    assertThat(crds().withName(CRD).get()).isNull();
  }

  private record Outcome(CrdDecision decision, String installed) {}

  /** Runs the upgrade as the operator and returns its outcomes by CRD name. */
  private static Map<String, Outcome> upgrade() {
    return new CrdUpgrade(cluster.operator.client())
        .run().stream()
            .collect(
                Collectors.toMap(
                    CrdUpgrade.Outcome::crd, o -> new Outcome(o.decision(), o.installed())));
  }

  private static Map<String, String> resourceVersions() {
    return List.of("storageclusters.soko.dev", "storagenodes.soko.dev").stream()
        .collect(
            Collectors.toMap(
                Function.identity(),
                name -> crds().withName(name).get().getMetadata().getResourceVersion()));
  }

  /**
   * This build's NodeRequest CRD without {@link #NEW_FIELD} (and the rule that reads it), stamped
   * with {@code release} (null: no annotation), as a cluster would hold it from another release.
   */
  private static CustomResourceDefinition older(String release) {
    CustomResourceDefinition crd = bundled();
    JSONSchemaProps spec =
        crd.getSpec()
            .getVersions()
            .get(0)
            .getSchema()
            .getOpenAPIV3Schema()
            .getProperties()
            .get("spec");
    spec.getProperties().remove(NEW_FIELD);
    spec.getXKubernetesValidations().removeIf(rule -> rule.getRule().contains(NEW_FIELD));
    spec.getProperties()
        .put(RETIRED_FIELD, new JSONSchemaPropsBuilder().withType("string").build());
    crd.getMetadata()
        .setAnnotations(release == null ? null : Map.of(CrdRelease.ANNOTATION, release));
    return crd;
  }

  private static CustomResourceDefinition bundled() {
    try (InputStream in =
        CrdUpgradeIT.class.getResourceAsStream("/META-INF/fabric8/" + CRD + "-v1.yml")) {
      return Serialization.unmarshal(in, CustomResourceDefinition.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String bundledRelease() {
    return bundled().getMetadata().getAnnotations().get(CrdRelease.ANNOTATION);
  }

  private static Map<String, JSONSchemaProps> specProperties(CustomResourceDefinition crd) {
    return crd.getSpec()
        .getVersions()
        .get(0)
        .getSchema()
        .getOpenAPIV3Schema()
        .getProperties()
        .get("spec")
        .getProperties();
  }

  /** Installs {@code crd} as Helm would (created by the admin) and waits until it is served. */
  private static void install(CustomResourceDefinition crd) {
    cluster.admin.resource(crd).create();
    crds().withName(CRD).waitUntilCondition(OperatorInstall::established, 60, TimeUnit.SECONDS);
    // Established is not yet served everywhere: a list answers once the resource is.
    Await.until("NodeRequests served", () -> requests().list() != null, served -> served);
  }

  /**
   * Creates (again) a NodeRequest {@code name} that sets {@link #NEW_FIELD} and returns the field
   * as the API server stored it: null when the schema in force prunes it.
   */
  private static Object storedNewField(String name) {
    var requests = requests();
    requests.withName(name).withGracePeriod(0).delete();
    Await.until(
        "NodeRequest " + name + " gone", () -> requests.withName(name).get(), r -> r == null);
    GenericKubernetesResource request = new GenericKubernetesResource();
    request.setApiVersion("soko.dev/v1alpha1");
    request.setKind("NodeRequest");
    request.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace("soko-system").build());
    request.setAdditionalProperty(
        "spec",
        Map.of(
            "node",
            "node-1",
            "operation",
            "ModifyVolume",
            "volumeId",
            "vol-1",
            "parameters",
            Map.of("readIOPS", "100"),
            NEW_FIELD,
            List.of("snap-1")));
    GenericKubernetesResource stored = requests.resource(request).create();
    return ((Map<?, ?>) stored.getAdditionalProperties().get("spec")).get(NEW_FIELD);
  }

  private static NonNamespaceOperation<
          GenericKubernetesResource,
          GenericKubernetesResourceList,
          Resource<GenericKubernetesResource>>
      requests() {
    return cluster
        .admin
        .genericKubernetesResources("soko.dev/v1alpha1", "NodeRequest")
        .inNamespace("soko-system");
  }

  private static NonNamespaceOperation<
          CustomResourceDefinition,
          CustomResourceDefinitionList,
          Resource<CustomResourceDefinition>>
      crds() {
    return cluster.admin.apiextensions().v1().customResourceDefinitions();
  }
}

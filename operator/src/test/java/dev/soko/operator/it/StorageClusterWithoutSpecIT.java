package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The schema requires {@code spec}, but a StorageCluster may have been stored without one before it
 * did (and Helm never upgrades a CRD it installed, so the old schema may still be in force). Each
 * test puts the old schema back for a moment, stores such an object, and restores the CRD.
 */
class StorageClusterWithoutSpecIT {
  private static final String CRD = "storageclusters.soko.dev";
  private static final String NAME = "stored-without-spec";
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
  }

  @AfterEach
  void restoreTheSchema() {
    setSpecRequired(true);
    Await.until("a StorageCluster without spec refused again", () -> !acceptsNoSpec(), ok -> ok);
  }

  /** Under the old schema: reported as InvalidSpec, and deleted, as nothing was installed. */
  @Test
  void underTheOldSchemaOneWithoutSpecIsReportedInvalidAndCanBeDeleted() {
    storeWithoutSpec();
    cluster.admin.resources(StorageCluster.class).withName(NAME).delete();
    Await.until("deleted", () -> cluster.get(NAME) == null, gone -> gone);
  }

  /**
   * Under the new schema the API server refuses every change to such an object, removing the
   * operator's finalizer included (it is not ratcheted: the failing check is on the whole object);
   * once deleted, giving it a spec lets the operator finish the delete.
   */
  @Test
  void underTheNewSchemaOneWithoutSpecIsDeletedOnceGivenASpec() {
    storeWithoutSpec();
    setSpecRequired(true);
    Await.until("a StorageCluster without spec refused", () -> !acceptsNoSpec(), ok -> ok);
    assertThatThrownBy(
            () ->
                cluster
                    .admin
                    .resources(StorageCluster.class)
                    .withName(NAME)
                    .patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        "{\"metadata\": {\"labels\": {\"touched\": \"yes\"}}}"))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("spec: Required value");

    cluster.admin.resources(StorageCluster.class).withName(NAME).delete();
    StorageCluster deleting = cluster.get(NAME);
    assertThat(deleting.getMetadata().getDeletionTimestamp()).isNotNull();
    assertThat(deleting.getMetadata().getFinalizers()).isNotEmpty();

    String spec =
        Serialization.asJson(
            Map.of(
                "spec",
                Map.of(
                    // Its own driver name: no other test's CSIDriver or volumes hold its delete up.
                    "driver", Map.of("name", NAME + ".soko.dev"),
                    "namespace", "soko-" + NAME,
                    "pools", List.of(Map.of("name", "unused", "path", "/var/lib/soko/unused")))));
    cluster
        .admin
        .resources(StorageCluster.class)
        .withName(NAME)
        .patch(PatchContext.of(PatchType.JSON_MERGE), spec);
    Await.until("deleted", () -> cluster.get(NAME) == null, gone -> gone);
  }

  /** Stores a StorageCluster without spec under the old schema; waits for the operator's report. */
  private static void storeWithoutSpec() {
    setSpecRequired(false);
    Await.until("a StorageCluster without spec accepted", () -> acceptsNoSpec(), ok -> ok);
    cluster.admin.resource(withoutSpec(NAME)).create();
    StorageCluster reported =
        Await.until(
            "InvalidSpec reported",
            Duration.ofSeconds(30),
            () -> cluster.get(NAME),
            s ->
                s.getStatus() != null
                    && s.getStatus().getConditions() != null
                    && s.getStatus().getConditions().stream()
                        .anyMatch(
                            c ->
                                "InvalidSpec".equals(c.getReason())
                                    && "spec is missing".equals(c.getMessage())));
    assertThat(reported.getMetadata().getFinalizers()).isNotEmpty();
  }

  private static boolean acceptsNoSpec() {
    try {
      cluster.admin.resource(withoutSpec("probe")).dryRun().create();
      return true;
    } catch (KubernetesClientException e) {
      return false;
    }
  }

  private static void setSpecRequired(boolean required) {
    cluster
        .admin
        .apiextensions()
        .v1()
        .customResourceDefinitions()
        .withName(CRD)
        .edit(
            crd -> {
              JSONSchemaProps root =
                  crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
              List<String> names = new ArrayList<>(root.getRequired());
              names.remove("spec");
              if (required) {
                names.add("spec");
              }
              root.setRequired(names);
              return crd;
            });
  }

  private static GenericKubernetesResource withoutSpec(String name) {
    return Serialization.unmarshal(
        "apiVersion: soko.dev/v1alpha1\nkind: StorageCluster\nmetadata: {name: " + name + "}\n",
        GenericKubernetesResource.class);
  }
}

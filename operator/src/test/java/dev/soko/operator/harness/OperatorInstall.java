package dev.soko.operator.harness;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What every API server the operator's tests start holds before the operator runs: the
 * StorageCluster and StorageNode CRDs (established), the soko-system namespace and the operator's
 * RBAC file, all from the classpath; and who the operator is on it. Shared by the IT tier's
 * kube-api-test cluster and the fault harness's {@link ControlPlane}.
 */
public final class OperatorInstall {
  public static final String OPERATOR_USER = "system:serviceaccount:soko-system:soko-operator";

  /** The groups the operator's ServiceAccount token carries in a real cluster. */
  public static final List<String> OPERATOR_GROUPS =
      List.of(
          "system:serviceaccounts", "system:serviceaccounts:soko-system", "system:authenticated");

  private OperatorInstall() {}

  /** Where hack/tools.sh builds the test binaries: $SOKO_CACHE, or ~/.cache/soko. */
  public static Path toolCache() {
    return Path.of(
        System.getenv()
            .getOrDefault("SOKO_CACHE", System.getProperty("user.home") + "/.cache/soko"));
  }

  /**
   * Applies both CRDs, as the chart installs them, waits until they are established, then the
   * namespace and the RBAC file.
   */
  public static void apply(KubernetesClient admin, String fieldManager) throws IOException {
    for (String crd : List.of("storageclusters.soko.dev", "storagenodes.soko.dev")) {
      applyResource(admin, fieldManager, "/META-INF/fabric8/" + crd + "-v1.yml");
      admin
          .apiextensions()
          .v1()
          .customResourceDefinitions()
          .withName(crd)
          .waitUntilCondition(OperatorInstall::established, 60, TimeUnit.SECONDS);
    }
    admin
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName("soko-system").endMetadata().build())
        .serverSideApply();
    applyResource(admin, fieldManager, "/rbac/operator-rbac.yaml");
  }

  /** Whether the API server has established {@code crd} (its Established condition is True). */
  public static boolean established(CustomResourceDefinition crd) {
    return crd != null
        && crd.getStatus() != null
        && crd.getStatus().getConditions() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private static void applyResource(KubernetesClient admin, String fieldManager, String resource)
      throws IOException {
    try (InputStream in = OperatorInstall.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing classpath resource " + resource);
      }
      for (HasMetadata o : admin.load(in).items()) {
        admin.resource(o).fieldManager(fieldManager).forceConflicts().serverSideApply();
      }
    }
  }
}

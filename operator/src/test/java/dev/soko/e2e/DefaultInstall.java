package dev.soko.e2e;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The install every real-node E2E class starts from: the chart with its StorageCluster, one pool on
 * the node's pool filesystem, an xfs class (the default) and an ext4 class on it, and snapshots.
 * Spec changes a test applies go on top of {@link #POOLS} and {@link #CLASSES}.
 */
final class DefaultInstall {
  static final String RELEASE = "soko";

  /** The operator's namespace (the chart's release) and the driver's, which the operator makes. */
  static final String OPERATOR = "soko-operator";

  static final String SYSTEM = "soko-system";
  static final String DRIVER = "csi.soko.dev";
  static final String XFS = "soko";
  static final String EXT4 = "soko-ext4";
  static final String SNAPSHOTS = "soko-snapshots";

  /** Where the local cluster mounts each node's pool filesystem. */
  static final String POOL_FILESYSTEM = "/var/lib/soko";

  static final String POOL = "default";
  static final String POOL_PATH = POOL_FILESYSTEM + "/pools/default";

  /** spec.pools and spec.storageClasses as the values below set them, for merge patches. */
  static final List<Map<String, Object>> POOLS = List.of(Map.of("name", POOL, "path", POOL_PATH));

  static final List<Map<String, Object>> CLASSES =
      List.of(
          Map.of("name", XFS, "pool", POOL, "fsType", "xfs", "default", true),
          Map.of("name", EXT4, "pool", POOL, "fsType", "ext4"));

  private DefaultInstall() {}

  /** {@code helm install} of the chart with {@link #values} into a fresh release. */
  static void helmInstall(LocalCluster cluster) throws Exception {
    helm(cluster, "install", LocalCluster.REPO.resolve("helm/soko"), values(cluster.imageRegistry));
  }

  /** {@code helm install} or {@code helm upgrade} of {@code chart} as {@link #RELEASE}. */
  static void helm(LocalCluster cluster, String verb, Path chart, String values) throws Exception {
    Path file = Files.createTempFile("soko-e2e-values", ".yaml");
    Files.writeString(file, values);
    try {
      cluster.helm(
          verb,
          RELEASE,
          chart.toString(),
          "--namespace",
          OPERATOR,
          "--create-namespace",
          "--values",
          file.toString());
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /**
   * The CRDs of {@code chart}, whole, as a first install of it leaves them: Helm installs a chart's
   * CRDs only where none exists, and the tiers before leave this tree's in the cluster. Each is
   * replaced (not applied: an apply would keep the newer release's annotation).
   */
  static void replaceCrds(KubernetesClient client, Path chart) throws Exception {
    try (var files = Files.list(chart.resolve("crds"))) {
      for (Path file : files.sorted().toList()) {
        CustomResourceDefinition crd;
        try (var in = Files.newInputStream(file)) {
          crd = client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        }
        var installed =
            client
                .apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName(crd.getMetadata().getName())
                .get();
        if (installed == null) {
          client.resource(crd).create();
        } else {
          crd.getMetadata().setResourceVersion(installed.getMetadata().getResourceVersion());
          client.resource(crd).update();
        }
      }
    }
  }

  /**
   * {@link #helmInstall}, then waits until the StorageCluster is Ready and makes the namespace the
   * tests' workloads run in.
   */
  static void helmInstallReady(LocalCluster cluster, KubernetesClient client, String appsNamespace)
      throws Exception {
    helmInstall(cluster);
    awaitReady(client, appsNamespace);
  }

  /**
   * Waits until the installed StorageCluster is Ready and makes the namespace the tests' workloads
   * run in.
   */
  static void awaitReady(KubernetesClient client, String appsNamespace) {
    Installed installed = new Installed(client);
    Await.until(
        "StorageCluster " + RELEASE + " Ready=True",
        Duration.ofSeconds(180),
        installed::storageCluster,
        sc -> "True".equals(Installed.condition(sc, "Ready")));
    client
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(appsNamespace).endMetadata().build())
        .serverSideApply();
  }

  /**
   * The uninstall docs/operations.md gives: the StorageCluster first, while the operator still runs
   * to take its finalizer off (the chart's uninstall would remove the operator with it and wait on
   * that finalizer for ever), then the chart, then the namespace the tests' workloads ran in.
   */
  static void uninstall(
      LocalCluster cluster, KubernetesClient client, String appsNamespace, Duration timeout)
      throws Exception {
    client.resources(StorageCluster.class).withName(RELEASE).delete();
    Await.until(
        "StorageCluster gone",
        timeout,
        () -> client.resources(StorageCluster.class).withName(RELEASE).get(),
        Objects::isNull);
    cluster.helm("uninstall", RELEASE, "--namespace", OPERATOR, "--wait", "--timeout", "2m");
    client.namespaces().withName(appsNamespace).delete();
    Await.until(
        "namespace " + appsNamespace + " gone",
        timeout,
        () -> client.namespaces().withName(appsNamespace).get(),
        Objects::isNull);
  }

  /** The chart's values: images from the node's registry name, and the StorageCluster. */
  static String values(String registry) {
    return values(registry, spec());
  }

  /** The chart's values with the StorageCluster spec {@code spec}. */
  static String values(String registry, String spec) {
    return """
            image:
              registry: %s
            imageRegistry: %s
            storageCluster:
              create: true
              name: %s
              spec:
            """
            .formatted(registry, registry, RELEASE)
        + spec.indent(4);
  }

  /** The StorageCluster's spec: the pool, its xfs (default) and ext4 classes, and snapshots. */
  static String spec() {
    return """
        pools:
          - name: %s
            path: %s
        storageClasses:
          - name: %s
            pool: %s
            fsType: xfs
            default: true
          - name: %s
            pool: %s
            fsType: ext4
        snapshots:
          enabled: true
          className: %s
        """
        .formatted(POOL, POOL_PATH, XFS, POOL, EXT4, POOL, SNAPSHOTS);
  }
}

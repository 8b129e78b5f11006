package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.OPERATOR;
import static dev.soko.e2e.DefaultInstall.RELEASE;
import static dev.soko.e2e.Installed.condition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Soko through OperatorHub: upstream OLM (its own manifests, its images built from the pinned
 * sources) on the real nodes serves a file-based catalog holding the newest release's bundle and
 * this tree's; an OperatorGroup and a Subscription install the release; approving the channel's
 * next InstallPlan upgrades it to this tree while pods write and fsync to volumes of every kind
 * (xfs, ext4, a raw block device, a btrfs subvolume), with no write lost and no pod restarted;
 * deleting the Subscription and the ClusterServiceVersion uninstalls it.
 */
class OlmE2E extends RealClusterTier {
  private static final String APPS = "e2e-olm";
  private static final Duration LONG = Duration.ofSeconds(300);

  /** OLM's namespace, where its global catalogs live, as upstream installs it. */
  private static final String OLM = "olm";

  private static final String CATALOG = "soko";
  private static final String CATALOG_SERVER = "soko-catalog";
  private static final String PACKAGE = "soko-operator";
  private static final String CHANNEL = "alpha";
  private static final String SUBSCRIPTION = "soko-operator";

  private static final ResourceDefinitionContext CATALOG_SOURCES = olmKind("catalogsources");
  private static final ResourceDefinitionContext SUBSCRIPTIONS = olmKind("subscriptions");
  private static final ResourceDefinitionContext INSTALL_PLANS = olmKind("installplans");
  private static final ResourceDefinitionContext CSVS = olmKind("clusterserviceversions");
  private static final ResourceDefinitionContext OPERATOR_GROUPS =
      new ResourceDefinitionContext.Builder()
          .withGroup("operators.coreos.com")
          .withVersion("v1")
          .withPlural("operatorgroups")
          .withNamespaced(true)
          .build();
  private static final ResourceDefinitionContext PACKAGE_MANIFESTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("packages.operators.coreos.com")
          .withVersion("v1")
          .withPlural("packagemanifests")
          .withNamespaced(true)
          .build();

  private static final BtrfsPool BTRFS = new BtrfsPool("olm");

  private LocalCluster.PreviousRelease previous;
  private Writers writers;
  private Path manifests;

  OlmE2E() {
    super(APPS);
  }

  @BeforeAll
  void prepare() throws Exception {
    previous = LocalCluster.previousRelease();
    writers =
        new Writers(
            client,
            apps,
            Map.of(
                "xfs", DefaultInstall.XFS, "ext4", DefaultInstall.EXT4, "btrfs", BtrfsPool.CLASS),
            DefaultInstall.XFS,
            Map.of("btrfs", BTRFS.nodeSelector()));
    manifests = Path.of(required("SOKO_CLUSTER_OLM_MANIFESTS"));
  }

  @Test
  @Order(1)
  void olmInstallsFromItsOwnManifestsAndItsPackageServerSucceeds() throws Exception {
    // Server-side: OLM's CRDs are larger than the annotation a client-side apply keeps.
    cluster.kubectl("apply", "--server-side", "-f", manifests.resolve("crds.yaml").toString());
    cluster.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=120s",
        "-f",
        manifests.resolve("crds.yaml").toString());
    cluster.kubectl("apply", "--server-side", "-f", manifests.resolve("olm.yaml").toString());
    for (String deployment : List.of("olm-operator", "catalog-operator")) {
      Await.until(
          "OLM's " + deployment + " available",
          LONG,
          () -> client.apps().deployments().inNamespace(OLM).withName(deployment).get(),
          d -> d != null && Objects.equals(d.getStatus().getAvailableReplicas(), 1));
    }
    Await.until(
        "OLM's package server installed by OLM itself (its CSV Succeeded)",
        LONG,
        () -> csvPhase(OLM, "packageserver"),
        "Succeeded"::equals);
  }

  /**
   * The catalog runs as a pod and Service of its own, and the CatalogSource names the Service's
   * address: for a CatalogSource that names an image, OLM makes that pod itself but dials its
   * Service by DNS name, and the local cluster runs no cluster DNS.
   */
  @Test
  @Order(2)
  void theCatalogServesBothReleasesOnOneChannel() throws Exception {
    client
        .resource(
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: %1$s
              namespace: %2$s
              labels:
                app: %1$s
            spec:
              securityContext:
                runAsNonRoot: true
                seccompProfile:
                  type: RuntimeDefault
              containers:
                - name: registry-server
                  image: %3$s
                  ports:
                    - containerPort: 50051
                  readinessProbe:
                    exec:
                      command: [grpc_health_probe, -addr=:50051]
                  securityContext:
                    allowPrivilegeEscalation: false
                    capabilities:
                      drop: [ALL]
            """
                .formatted(CATALOG_SERVER, OLM, required("SOKO_OLM_CATALOG")))
        .create();
    Service service =
        client
            .resource(
                new ServiceBuilder()
                    .withNewMetadata()
                    .withName(CATALOG_SERVER)
                    .withNamespace(OLM)
                    .endMetadata()
                    .withNewSpec()
                    .withSelector(Map.of("app", CATALOG_SERVER))
                    .addNewPort()
                    .withPort(50051)
                    .endPort()
                    .endSpec()
                    .build())
            .create();
    String address = service.getSpec().getClusterIP() + ":50051";
    client
        .resource(
            """
            apiVersion: operators.coreos.com/v1alpha1
            kind: CatalogSource
            metadata:
              name: %s
              namespace: %s
            spec:
              sourceType: grpc
              address: %s
              displayName: Soko
              publisher: Soko
            """
                .formatted(CATALOG, OLM, address))
        .create();
    Await.until(
        "CatalogSource " + CATALOG + " serving (connection READY)",
        LONG,
        () -> olm(CATALOG_SOURCES, OLM, CATALOG),
        source -> "READY".equals(path(source, "status", "connectionState", "lastObservedState")));
    Await.until(
        "package "
            + PACKAGE
            + " listed by the package server, channel "
            + CHANNEL
            + " at this tree",
        LONG,
        () -> olm(PACKAGE_MANIFESTS, OLM, PACKAGE),
        manifest ->
            manifest != null && currentCsvOf(manifest).equals(csvName(cluster.projectVersion)));
  }

  @Test
  @Order(3)
  void aSubscriptionInstallsThePreviousReleaseAndItsStorageClusterServesWriters() throws Exception {
    namespace(OPERATOR);
    client
        .resource(
            """
            apiVersion: operators.coreos.com/v1
            kind: OperatorGroup
            metadata:
              name: soko
              namespace: %s
            spec: {}
            """
                .formatted(OPERATOR))
        .create();
    // Manual approval: each step of the channel waits for the admin, so that the test (the admin)
    // starts the upgrade while the writers run.
    client
        .resource(
            """
            apiVersion: operators.coreos.com/v1alpha1
            kind: Subscription
            metadata:
              name: %s
              namespace: %s
            spec:
              channel: %s
              name: %s
              source: %s
              sourceNamespace: %s
              startingCSV: %s
              installPlanApproval: Manual
              config:
                env:
                  - name: SOKO_IMAGE_REGISTRY
                    value: %s
            """
                .formatted(
                    SUBSCRIPTION,
                    OPERATOR,
                    CHANNEL,
                    PACKAGE,
                    CATALOG,
                    OLM,
                    csvName(previous.version()),
                    cluster.imageRegistry))
        .create();
    approveInstallPlanFor(csvName(previous.version()));
    Await.until(
        "CSV " + csvName(previous.version()) + " Succeeded",
        LONG,
        () -> csvPhase(OPERATOR, csvName(previous.version())),
        "Succeeded"::equals);

    BTRFS.mountOn(cluster);
    client
        .resource(
            "apiVersion: soko.dev/v1alpha1\nkind: StorageCluster\nmetadata:\n  name: "
                + RELEASE
                + "\nspec:\n"
                + BTRFS.spec().indent(2))
        .create();
    Await.until(
        "StorageCluster " + RELEASE + " of release " + previous.version() + " Ready=True",
        LONG,
        installed::storageCluster,
        sc -> "True".equals(condition(sc, "Ready")));
    assertThat(installed.nodePluginImages())
        .allMatch(
            image -> image.equals(cluster.imageRegistry + "/soko-driver:" + previous.version()));
    namespace(APPS);
    writers.start(LONG);
  }

  @Test
  @Order(4)
  void approvingTheChannelsNextStepUpgradesToThisTreeAndTheWritersGoOn() throws Exception {
    String next = csvName(cluster.projectVersion);
    approveInstallPlanFor(next);
    Await.until(
        "CSV " + next + " Succeeded", LONG, () -> csvPhase(OPERATOR, next), "Succeeded"::equals);
    Await.until(
        "the replaced CSV " + csvName(previous.version()) + " removed by OLM",
        LONG,
        () -> olm(CSVS, OPERATOR, csvName(previous.version())),
        Objects::isNull);
    Deployment operator = operatorDeployment();
    assertThat(operator.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .isEqualTo(cluster.imageRegistry + "/soko-operator:" + cluster.projectVersion);
    Await.until(
        "the node plugin rolled out with the images of " + cluster.projectVersion,
        LONG,
        installed::nodePluginDaemonSet,
        ds -> installed.rolledOutTo(ds, cluster.projectVersion, cluster.nodes.size()));
    Await.until(
        "StorageCluster Ready=True after the upgrade",
        LONG,
        installed::storageCluster,
        sc -> "True".equals(condition(sc, "Ready")));
    writers.assertNothingLostThrough("the OLM upgrade");

    apps.create(apps.claim("fresh", DefaultInstall.XFS, "320Mi", false));
    apps.create(apps.pod("fresh", "fresh", false, false));
    apps.awaitRunning("fresh", LONG);
    apps.sh("fresh", "echo new > /data/new && sync -d /data/new");
    assertThat(apps.sh("fresh", "cat /data/new")).isEqualTo("new");
  }

  /**
   * The uninstall OLM documents: the StorageCluster first (while the operator still runs to remove
   * what it made), then the Subscription and the CSV; OLM leaves the CRDs, which the admin deletes
   * last. OLM itself goes too, so that the next tier starts from a bare cluster.
   */
  @Test
  @Order(5)
  void deletingTheSubscriptionAndTheCsvUninstalls() throws Exception {
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    client.resources(StorageCluster.class).withName(RELEASE).delete();
    Await.until("StorageCluster gone", LONG, installed::storageCluster, Objects::isNull);
    Await.until(
        "namespace " + DefaultInstall.SYSTEM + " gone with the StorageCluster",
        LONG,
        () -> client.namespaces().withName(DefaultInstall.SYSTEM).get(),
        Objects::isNull);

    client
        .genericKubernetesResources(SUBSCRIPTIONS)
        .inNamespace(OPERATOR)
        .withName(SUBSCRIPTION)
        .delete();
    client
        .genericKubernetesResources(CSVS)
        .inNamespace(OPERATOR)
        .withName(csvName(cluster.projectVersion))
        .delete();
    Await.until(
        "the operator's Deployment removed by OLM",
        LONG,
        () -> client.apps().deployments().inNamespace(OPERATOR).list().getItems(),
        List::isEmpty);
    client.genericKubernetesResources(CATALOG_SOURCES).inNamespace(OLM).withName(CATALOG).delete();
    client.services().inNamespace(OLM).withName(CATALOG_SERVER).delete();
    client.pods().inNamespace(OLM).withName(CATALOG_SERVER).delete();
    for (String ns : List.of(APPS, OPERATOR)) {
      client.namespaces().withName(ns).delete();
    }
    cluster.kubectl("delete", "crd", "storageclusters.soko.dev", "storagenodes.soko.dev");
    BTRFS.removeFrom(cluster);
    // OLM's own uninstall: its package server's CSV while OLM still runs to finalize it, the
    // APIService it served (otherwise namespaces cannot be deleted: discovery fails), then the
    // rest.
    cluster.kubectl("delete", "--wait", "-n", OLM, "clusterserviceversion", "packageserver");
    cluster.kubectl(
        "delete", "--ignore-not-found", "apiservice", "v1.packages.operators.coreos.com");
    cluster.kubectl(
        "delete", "--ignore-not-found", "--wait", "-f", manifests.resolve("olm.yaml").toString());
    cluster.kubectl(
        "delete", "--ignore-not-found", "--wait", "-f", manifests.resolve("crds.yaml").toString());
    for (String ns : List.of(APPS, OPERATOR, OLM, "operators")) {
      Await.until(
          "namespace " + ns + " gone",
          LONG,
          () -> client.namespaces().withName(ns).get(),
          Objects::isNull);
    }
  }

  // --- helpers --------------------------------------------------------------------------------

  private static ResourceDefinitionContext olmKind(String plural) {
    return new ResourceDefinitionContext.Builder()
        .withGroup("operators.coreos.com")
        .withVersion("v1alpha1")
        .withPlural(plural)
        .withNamespaced(true)
        .build();
  }

  /** The CSV name OLM knows a version of the package by, as the bundle's CSV names itself. */
  private static String csvName(String version) {
    return PACKAGE + ".v" + version.toLowerCase(Locale.ROOT);
  }

  private static String required(String variable) {
    return Objects.requireNonNull(
        System.getenv(variable), variable + " is not set: run the tier with hack/e2e-node.sh");
  }

  private GenericKubernetesResource olm(ResourceDefinitionContext kind, String ns, String name) {
    return client.genericKubernetesResources(kind).inNamespace(ns).withName(name).get();
  }

  private String csvPhase(String ns, String name) {
    return (String) path(olm(CSVS, ns, name), "status", "phase");
  }

  /** The head of the channel {@link #CHANNEL} in a PackageManifest, or "" while it has none. */
  @SuppressWarnings("unchecked")
  private static String currentCsvOf(GenericKubernetesResource manifest) {
    Object channels = path(manifest, "status", "channels");
    if (!(channels instanceof List<?> list)) {
      return "";
    }
    return list.stream()
        .map(c -> (Map<String, Object>) c)
        .filter(c -> CHANNEL.equals(c.get("name")))
        .map(c -> String.valueOf(c.get("currentCSV")))
        .findFirst()
        .orElse("");
  }

  /** Waits for the InstallPlan that installs {@code csv}, then approves it as an admin would. */
  private void approveInstallPlanFor(String csv) {
    GenericKubernetesResource plan =
        Await.until(
            "an InstallPlan for " + csv,
            LONG,
            () ->
                client
                    .genericKubernetesResources(INSTALL_PLANS)
                    .inNamespace(OPERATOR)
                    .list()
                    .getItems()
                    .stream()
                    .filter(
                        p ->
                            String.valueOf(path(p, "spec", "clusterServiceVersionNames"))
                                .contains(csv))
                    .findFirst()
                    .orElse(null),
            Objects::nonNull);
    client
        .genericKubernetesResources(INSTALL_PLANS)
        .inNamespace(OPERATOR)
        .withName(plan.getMetadata().getName())
        // A merge patch, not a read-modify-write: OLM updates the plan's status meanwhile.
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"approved\":true}}");
  }

  private Deployment operatorDeployment() {
    List<Deployment> deployments =
        client.apps().deployments().inNamespace(OPERATOR).list().getItems();
    assertThat(deployments).as("the operator's Deployment, made by OLM").hasSize(1);
    return deployments.get(0);
  }

  private void namespace(String name) {
    client
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .serverSideApply();
  }

  /** The value at {@code keys} under an object's properties, or null where a key is missing. */
  @SuppressWarnings("unchecked")
  private static Object path(GenericKubernetesResource resource, String... keys) {
    if (resource == null) {
      return null;
    }
    Object node = resource.getAdditionalProperties();
    for (String key : keys) {
      if (!(node instanceof Map<?, ?> map)) {
        return null;
      }
      node = ((Map<String, Object>) map).get(key);
    }
    return node;
  }
}

package dev.soko.e2e;

import static dev.soko.e2e.Installed.condition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import dev.soko.operator.harness.OperatorInstall;
import dev.soko.operator.harness.PlayedCluster;
import dev.soko.operator.harness.PlayedNode;
import dev.soko.operator.harness.StopAfterFailure;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.VersionsTable;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The operator and the driver on a real control plane without a kubelet: etcd, kube-apiserver with
 * RBAC, kube-controller-manager's storage controllers and snapshot-controller as processes, the
 * operator jar as its ServiceAccount, and "the node" played by the driver and the real
 * csi-provisioner, csi-snapshotter and csi-resizer run with the args the operator applied and under
 * the ServiceAccounts it made ({@link PlayedNode}). One StorageCluster and a volume's life through
 * Kubernetes objects: install, provision, expand, snapshot, restore, delete, uninstall. The tests
 * build on each other, in order.
 *
 * <p>Not exercised here (no kubelet): plugin registration and liveness probes, NodeStage/Publish
 * and NodeExpandVolume. After the resize the test checks what the resizer sets (PV capacity and the
 * PVC's FileSystemResizePending condition); the filesystem's growth is the kubelet's part, which
 * {@code RealNodeE2E} covers on a real node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(StopAfterFailure.class)
class ControlPlaneE2E {
  private static final PlayedCluster.Names NAMES = PlayedCluster.Names.of("e2e");
  private static final String CLUSTER = NAMES.cluster();
  private static final String NAMESPACE = NAMES.namespace();
  private static final String DRIVER = NAMES.driver();
  private static final String CLASS = NAMES.storageClass();
  private static final String SNAPSHOT_CLASS = NAMES.snapshotClass();
  private static final String APPS = NAMES.apps();
  private static final String NODE = NAMES.node();
  private static final Duration TIMEOUT = Duration.ofSeconds(90);
  private static final ResourceDefinitionContext SNAPSHOT_CONTENTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withKind("VolumeSnapshotContent")
          .withPlural("volumesnapshotcontents")
          .withNamespaced(false)
          .build();
  private static final ResourceDefinitionContext SNAPSHOT_METADATA_SERVICES =
      new ResourceDefinitionContext.Builder()
          .withGroup("cbt.storage.k8s.io")
          .withVersion("v1beta1")
          .withKind("SnapshotMetadataService")
          .withPlural("snapshotmetadataservices")
          .withNamespaced(false)
          .build();
  private static final ResourceDefinitionContext SNAPSHOT_CLASSES =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withKind("VolumeSnapshotClass")
          .withPlural("volumesnapshotclasses")
          .withNamespaced(false)
          .build();

  private PlayedCluster cluster;
  private PlayedNode node;
  private KubernetesClient client;
  private Workloads apps;
  private StorageCluster applied;

  /** The resourceVersions of the sidecar's Secret and SnapshotMetadataService once installed. */
  private List<String> servingVersions;

  private String pv;

  @BeforeAll
  void startControlPlaneAndOperator() throws Exception {
    cluster =
        PlayedCluster.start(NAMES, Path.of("target", "control-plane-e2e-logs").toAbsolutePath());
    node = cluster.node();
    client = cluster.admin();
    apps = Workloads.withoutPods(client, APPS);
  }

  @AfterAll
  void stopEverything() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  @Order(1)
  void theOperatorInstallsTheDriverForAStorageCluster() throws Exception {
    applied = Serialization.unmarshal(cluster.storageClusterYaml(), StorageCluster.class);
    client.resource(applied).create();
    Await.until(
        "CSIDriver " + DRIVER + " with storageCapacity",
        TIMEOUT,
        () -> client.storage().v1().csiDrivers().withName(DRIVER).get().getSpec(),
        spec -> Boolean.TRUE.equals(spec.getStorageCapacity()));
    StorageClass sc =
        Await.until(
            "StorageClass " + CLASS,
            TIMEOUT,
            () -> client.storage().v1().storageClasses().withName(CLASS).get(),
            Objects::nonNull);
    assertThat(sc.getProvisioner()).isEqualTo(DRIVER);
    assertThat(sc.getVolumeBindingMode()).isEqualTo("WaitForFirstConsumer");
    assertThat(sc.getAllowVolumeExpansion()).isTrue();
    GenericKubernetesResource snapshotClass =
        Await.until(
            "VolumeSnapshotClass " + SNAPSHOT_CLASS,
            TIMEOUT,
            () ->
                client.genericKubernetesResources(SNAPSHOT_CLASSES).withName(SNAPSHOT_CLASS).get(),
            Objects::nonNull);
    assertThat(snapshotClass.get("driver").toString()).isEqualTo(DRIVER);
    Await.until(
        "DaemonSet " + NAMESPACE + "/" + CLUSTER + "-node",
        TIMEOUT,
        this::daemonSet,
        Objects::nonNull);
    Await.until(
        "Deployment " + NAMESPACE + "/" + CLUSTER + "-controller",
        TIMEOUT,
        this::deployment,
        Objects::nonNull);
    StorageCluster observed =
        Await.until(
            "status.observedGeneration = metadata.generation",
            TIMEOUT,
            this::storageClusterNow,
            s ->
                s.getStatus() != null
                    && Objects.equals(
                        s.getStatus().getObservedGeneration(), s.getMetadata().getGeneration()));
    var version = client.getKubernetesVersion();
    assertThat(observed.getStatus().getKubernetesVersion())
        .as("status.kubernetesVersion, the API server's")
        .startsWith("v" + version.getMajor() + "." + version.getMinor().replace("+", ""));
    assertThat(condition(observed, "Compatible")).isEqualTo("True");
    changedBlockTrackingRunsWithTheCertificateOfTheOperatorsCa();
  }

  /**
   * The cluster serves the SnapshotMetadataService CRD (the harness applies every snapshot CRD):
   * the status says the sidecar runs, and its object's caCert is the bundle in its Secret, whose
   * certificate that CA signed for the Service's names.
   */
  private void changedBlockTrackingRunsWithTheCertificateOfTheOperatorsCa() throws Exception {
    StorageCluster running =
        Await.until(
            "status.changedBlockTracking.running",
            TIMEOUT,
            this::storageClusterNow,
            s ->
                s.getStatus() != null
                    && s.getStatus().getChangedBlockTracking() != null
                    && s.getStatus().getChangedBlockTracking().running());
    assertThat(running.getStatus().getChangedBlockTracking().reason()).isEqualTo("Running");
    Secret tls = servingSecret();
    GenericKubernetesResource sms = snapshotMetadataService();
    String caCert = (String) ((Map<?, ?>) sms.getAdditionalProperties().get("spec")).get("caCert");
    assertThat(decode(caCert)).isEqualTo(decode(tls.getData().get("ca.crt")));
    var factory = CertificateFactory.getInstance("X.509");
    X509Certificate ca =
        (X509Certificate)
            factory.generateCertificate(
                new ByteArrayInputStream(Base64.getDecoder().decode(caCert)));
    X509Certificate served =
        (X509Certificate)
            factory.generateCertificate(
                new ByteArrayInputStream(Base64.getDecoder().decode(tls.getData().get("tls.crt"))));
    served.verify(ca.getPublicKey());
    assertThat(served.getSubjectAlternativeNames().stream().map(n -> (String) n.get(1)).toList())
        .contains(CLUSTER + "-snapshot-metadata." + NAMESPACE);
    servingVersions =
        List.of(tls.getMetadata().getResourceVersion(), sms.getMetadata().getResourceVersion());
  }

  private Secret servingSecret() {
    return client
        .secrets()
        .inNamespace(NAMESPACE)
        .withName(CLUSTER + "-snapshot-metadata-tls")
        .get();
  }

  private GenericKubernetesResource snapshotMetadataService() {
    return client.genericKubernetesResources(SNAPSHOT_METADATA_SERVICES).withName(DRIVER).get();
  }

  private static String decode(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.US_ASCII);
  }

  @Test
  @Order(2)
  void renderPrintsTheContainerArgsTheOperatorApplied() {
    KubernetesVersion version =
        KubernetesVersion.parse(storageClusterNow().getStatus().getKubernetesVersion());
    DesiredState rendered =
        DesiredState.of(applied, VersionsTable.load(), ClusterFacts.offline(version));
    Map<String, List<String>> renderedArgs = new TreeMap<>();
    for (HasMetadata object : rendered.all()) {
      if (object instanceof DaemonSet ds) {
        renderedArgs.putAll(args("DaemonSet", ds.getSpec().getTemplate()));
      } else if (object instanceof Deployment dep) {
        renderedArgs.putAll(args("Deployment", dep.getSpec().getTemplate()));
      }
    }
    Map<String, List<String>> appliedArgs = new TreeMap<>();
    appliedArgs.putAll(args("DaemonSet", daemonSet().getSpec().getTemplate()));
    appliedArgs.putAll(args("Deployment", deployment().getSpec().getTemplate()));
    assertThat(appliedArgs).isNotEmpty().isEqualTo(renderedArgs);
  }

  @Test
  @Order(3)
  void kubectlShowsReadyFirstAndAgeLast() throws Exception {
    String kubectl = OperatorInstall.toolCache().resolve("bin/kubectl").toString();
    String out =
        LocalCluster.run(
            List.of(
                kubectl,
                "--kubeconfig",
                cluster.plane().kubeconfig("admin").toString(),
                "get",
                "storagecluster",
                CLUSTER),
            30);
    assertThat(Arrays.asList(out.lines().findFirst().orElse("").trim().split("\\s+")))
        .containsExactly(
            "NAME", "READY", "KUBERNETES", "NODES-READY", "NODES-DESIRED", "USED", "TOTAL", "AGE");
  }

  @Test
  @Order(4)
  void theNodeRunsTheDriverAndSidecarsWithTheOperatorsArgs() throws Exception {
    node.startDriver(CLUSTER, NAMESPACE, DRIVER);
    Await.until(
        "the provisioner to publish CSIStorageCapacity for " + CLASS,
        TIMEOUT,
        () ->
            client
                .storage()
                .v1()
                .csiStorageCapacities()
                .inNamespace(NAMESPACE)
                .list()
                .getItems()
                .stream()
                .filter(c -> CLASS.equals(c.getStorageClassName()))
                .toList(),
        list -> !list.isEmpty() && list.get(0).getCapacity() != null);
    assertThat(node.driverArgs())
        .as("the driver checks pools against the kubelet directory's filesystem")
        .anyMatch(a -> a.startsWith("--kubelet-dir="));
    assertThat(Files.readString(node.log("driver-node")))
        .as("the pool has a filesystem of its own, so the driver refuses none")
        .doesNotContainPattern("pool [a-z0-9-]+ refused");
    // The operator watches CSINode and CSIStorageCapacity: status follows without a spec change.
    Await.until(
        "status to count the node as registered (CSINode)",
        TIMEOUT,
        () -> storageClusterNow().getStatus().getNodes().registered(),
        registered -> Integer.valueOf(1).equals(registered));
    Await.until(
        "status to report the pool's capacity (CSIStorageCapacity)",
        TIMEOUT,
        () -> storageClusterNow().getStatus().getPools(),
        pools -> pools != null && pools.stream().anyMatch(p -> p.total() != null));
  }

  @Test
  @Order(5)
  void aClaimIsProvisionedOnTheNode() throws Exception {
    apps.createNamespace();
    apps.create(Workloads.onNode(apps.claim("data", CLASS, "64Mi", false), NODE));
    PersistentVolumeClaim bound = apps.awaitBound("data", TIMEOUT);
    pv = bound.getSpec().getVolumeName();
    PersistentVolume volume = client.persistentVolumes().withName(pv).get();
    assertThat(volume.getSpec().getCsi().getDriver()).isEqualTo(DRIVER);
    assertThat(
            volume
                .getSpec()
                .getNodeAffinity()
                .getRequired()
                .getNodeSelectorTerms()
                .get(0)
                .getMatchExpressions())
        .as("PV " + pv + " is pinned to the node by topology")
        .anyMatch(
            e -> PlayedNode.TOPOLOGY_KEY.equals(e.getKey()) && e.getValues().equals(List.of(NODE)));
    Path image = imageOf(pv);
    assertThat(image).as("the volume's image file in the pool").isRegularFile();
    assertThat(Files.size(image)).as("the size asked for").isEqualTo(64L << 20);
  }

  @Test
  @Order(6)
  void theClaimIsExpanded() {
    apps.resize("data", "128Mi");
    Await.until(
        "the resizer to grow PV " + pv + " to 128Mi (ControllerExpandVolume)",
        TIMEOUT,
        () -> apps.volumeCapacity(pv),
        "128Mi"::equals);
    Await.until(
        "the claim to wait for node expansion (FileSystemResizePending, a kubelet's part)",
        TIMEOUT,
        () -> claimConditions("data"),
        conditions ->
            conditions.stream()
                .anyMatch(
                    c ->
                        "FileSystemResizePending".equals(c.getType())
                            && "True".equals(c.getStatus())));
  }

  @Test
  @Order(7)
  void aSnapshotOfTheClaimIsRestoredIntoANewClaim() throws Exception {
    GenericKubernetesResource ready = apps.snapshot("snap", "data", SNAPSHOT_CLASS, TIMEOUT);
    assertThat(cluster.poolImages("snapshots")).as("the snapshot's image in the pool").hasSize(1);
    String restoreSize = ready.get("status", "restoreSize").toString();
    apps.create(Workloads.onNode(apps.restoredClaim("restored", CLASS, restoreSize, "snap"), NODE));
    apps.awaitBound("restored", TIMEOUT);
    assertThat(cluster.poolImages("images")).as("two volume images in the pool").hasSize(2);
  }

  @Test
  @Order(8)
  void deletingTheSnapshotAndTheRestoredClaimRemovesTheirImages() throws Exception {
    String restoredPv =
        client
            .persistentVolumeClaims()
            .inNamespace(APPS)
            .withName("restored")
            .get()
            .getSpec()
            .getVolumeName();
    client
        .genericKubernetesResources(Workloads.VOLUME_SNAPSHOTS)
        .inNamespace(APPS)
        .withName("snap")
        .delete();
    client.persistentVolumeClaims().inNamespace(APPS).withName("restored").delete();
    Await.until(
        "the VolumeSnapshotContent to be gone",
        TIMEOUT,
        () -> client.genericKubernetesResources(SNAPSHOT_CONTENTS).list().getItems(),
        List::isEmpty);
    awaitPoolFiles("snapshots", 0);
    Await.until(
        "PV " + restoredPv + " to be deleted",
        TIMEOUT,
        () -> client.persistentVolumes().withName(restoredPv).get(),
        Objects::isNull);
    awaitPoolFiles("images", 1);
  }

  @Test
  @Order(9)
  void uninstallWaitsWhileAVolumeOfTheDriverExists() throws Exception {
    assertThat(
            List.of(
                servingSecret().getMetadata().getResourceVersion(),
                snapshotMetadataService().getMetadata().getResourceVersion()))
        .as("every reconcile since the install found the sidecar's certificate valid: no write")
        .isEqualTo(servingVersions);
    client.resource(applied).delete();
    Await.until(
        "status to say deletion is blocked by PV " + pv,
        TIMEOUT,
        () -> storageClusterNow().getStatus().getConditions(),
        conditions ->
            conditions.stream()
                .anyMatch(
                    c -> "DeletionBlocked".equals(c.getReason()) && c.getMessage().contains(pv)));
    assertThat(client.storage().v1().csiDrivers().withName(DRIVER).get())
        .as("the CSIDriver is kept meanwhile")
        .isNotNull();
    client.persistentVolumeClaims().inNamespace(APPS).withName("data").delete();
    Await.until(
        "PV " + pv + " to be deleted",
        TIMEOUT,
        () -> client.persistentVolumes().withName(pv).get(),
        Objects::isNull);
    awaitPoolFiles("images", 0);
    for (String sidecar : List.of("csi-provisioner", "csi-resizer", "csi-snapshotter")) {
      // The node's csi-snapshotter runs with CSIVolumeGroupSnapshot off and never reads the group
      // API, which only the controller's csi-group-snapshotter is granted: no refusal at all.
      assertThat(Files.readAllLines(node.log(sidecar)))
          .as("RBAC errors in the log of " + sidecar)
          .filteredOn(line -> line.toLowerCase(java.util.Locale.ROOT).contains("forbidden"))
          .isEmpty();
    }
  }

  @Test
  @Order(10)
  void withTheLastVolumeGoneTheStorageClusterIsUninstalled() throws Exception {
    String pod = CLUSTER + "-node-played";
    Await.until(
        "status to say the uninstall waits for pod " + pod,
        TIMEOUT,
        () -> storageClusterNow().getStatus().getConditions(),
        conditions ->
            conditions.stream()
                .anyMatch(
                    c -> "Uninstalling".equals(c.getReason()) && c.getMessage().contains(pod)));
    assertThat(deployment()).as("the workloads are deleted first").isNull();
    assertThat(daemonSet()).as("the workloads are deleted first").isNull();
    assertThat(
            client
                .rbac()
                .roleBindings()
                .inNamespace(NAMESPACE)
                .withLabel(Names.LABEL_CLUSTER, CLUSTER)
                .list()
                .getItems())
        .as("the sidecars' RBAC is kept while their pods run")
        .isNotEmpty();
    assertThat(client.storage().v1().storageClasses().withName(CLASS).get())
        .as("the StorageClass is kept while the provisioner's pod runs")
        .isNotNull();
    node.endPods(NAMESPACE);
    Await.until(
        "StorageCluster " + CLUSTER + " to be gone (finalizer done)",
        TIMEOUT,
        () -> client.resource(applied).get(),
        Objects::isNull);
    Await.until(
        "CSIDriver " + DRIVER + " to be gone",
        TIMEOUT,
        () -> client.storage().v1().csiDrivers().withName(DRIVER).get(),
        Objects::isNull);
    Await.until(
        "StorageClass " + CLASS + " to be gone",
        TIMEOUT,
        () -> client.storage().v1().storageClasses().withName(CLASS).get(),
        Objects::isNull);
    Await.until(
        "VolumeSnapshotClass " + SNAPSHOT_CLASS + " to be gone",
        TIMEOUT,
        () -> client.genericKubernetesResources(SNAPSHOT_CLASSES).withName(SNAPSHOT_CLASS).get(),
        Objects::isNull);
    Await.until(
        "namespace " + NAMESPACE + " to be terminating",
        TIMEOUT,
        () -> client.namespaces().withName(NAMESPACE).get(),
        ns -> ns == null || ns.getMetadata().getDeletionTimestamp() != null);
    Await.until(
        "namespace " + NAMESPACE + " to be gone (its pods' end confirmed as a kubelet would)",
        TIMEOUT,
        () -> {
          node.confirmPodsDeleted(NAMESPACE);
          return client.namespaces().withName(NAMESPACE).get();
        },
        Objects::isNull);
    assertThat(Files.readAllLines(cluster.operator().log()))
        .as("errors in the operator's log")
        .filteredOn(line -> line.matches("^[0-9:.]+ ERROR .*"))
        .isEmpty();
  }

  private List<PersistentVolumeClaimCondition> claimConditions(String claim) {
    List<PersistentVolumeClaimCondition> conditions =
        client
            .persistentVolumeClaims()
            .inNamespace(APPS)
            .withName(claim)
            .get()
            .getStatus()
            .getConditions();
    return conditions == null ? List.of() : conditions;
  }

  private StorageCluster storageClusterNow() {
    return client.resources(StorageCluster.class).withName(CLUSTER).get();
  }

  private DaemonSet daemonSet() {
    return client.apps().daemonSets().inNamespace(NAMESPACE).withName(CLUSTER + "-node").get();
  }

  private Deployment deployment() {
    return client
        .apps()
        .deployments()
        .inNamespace(NAMESPACE)
        .withName(CLUSTER + "-controller")
        .get();
  }

  private static Map<String, List<String>> args(String kind, PodTemplateSpec template) {
    Map<String, List<String>> args = new TreeMap<>();
    template
        .getSpec()
        .getContainers()
        .forEach(
            c -> args.put(kind + "/" + c.getName(), c.getArgs() == null ? List.of() : c.getArgs()));
    return args;
  }

  /** The pool image behind a PV, from its CSI volume handle. */
  private Path imageOf(String volume) {
    String handle =
        client.persistentVolumes().withName(volume).get().getSpec().getCsi().getVolumeHandle();
    return cluster.poolDir().resolve("images").resolve(handle + ".img");
  }

  private void awaitPoolFiles(String dir, int count) {
    Await.until(
        count + " image files in the pool's " + dir,
        TIMEOUT,
        () -> cluster.poolImages(dir),
        f -> f.size() == count);
  }
}

package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.EXT4;
import static dev.soko.e2e.DefaultInstall.SNAPSHOTS;
import static dev.soko.e2e.DefaultInstall.XFS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Data that outlives its node, the way admins move it: Velero v1.18 with its CSI snapshot data
 * mover and a MinIO store ({@code hack/velero.sh}), a StorageCluster whose VolumeSnapshotClass is
 * Velero's ({@code spec.snapshots.velero}). An application on the second node writes numbered
 * records with fsync to an xfs, an ext4 and a block claim; a backup moves their snapshots' data to
 * the store; the node is then lost as a node is (its machine stopped, its Node deleted, its volumes
 * deleted under {@code nodeLoss: Delete}); the namespace restored from the backup runs on the other
 * node and every claim holds an unbroken run of records at least as long as the application had
 * written when the backup began, and the random data written to each before the backup has the same
 * sha256. It needs two nodes, and says so by skipping on one.
 */
class VeleroE2E extends RealClusterTier {
  private static final Logger LOG = LoggerFactory.getLogger(VeleroE2E.class);
  private static final String APPS = "e2e-velero";
  private static final String APP = "ledger";
  private static final String BACKUP = "ledger-backup";
  private static final String VELERO = "velero";
  private static final Duration LONG = Duration.ofSeconds(300);
  private static final int BLOCK_RECORD = 16;
  private static final int BLOB_MIB = 8;
  private static final int BLOB_OFFSET_MIB = 32;

  /**
   * Appends record i (1, 2, ...) to /xfs/records and /ext4/records and writes it as the i-th
   * 16-byte slot of the block device, each made durable before the next (sync, dd's fsync). The
   * restored application finds its records and only waits, so the claims hold what the backup did.
   */
  private static final String WRITER =
      "trap 'exit 0' TERM; if [ -s /xfs/records ]; then while true; do sleep 1; done; fi;"
          + " i=0; while true; do i=$((i+1));"
          + " echo $i >> /xfs/records; echo $i >> /ext4/records;"
          + " printf '%015d\\n' $i | dd of=/dev/xvda bs="
          + BLOCK_RECORD
          + " seek=$((i-1)) conv=notrunc,fsync 2>/dev/null; sync; sleep 0.05; done";

  private String lost;
  private String survivor;
  private boolean veleroStarted;

  VeleroE2E() {
    super(APPS);
  }

  @BeforeAll
  void install() throws Exception {
    Assumptions.assumeTrue(
        cluster.nodes.size() > 1,
        "a restore after a node's loss needs another node; this cluster has "
            + cluster.nodes.size()
            + " (make cluster-up NODES=2)");
    // The first node runs the control plane (and the store): the second one is lost.
    survivor = cluster.nodes.get(0);
    lost = cluster.nodes.get(1);
    cluster.velero("up");
    veleroStarted = true;
    DefaultInstall.helm(
        cluster,
        "install",
        LocalCluster.REPO.resolve("helm/soko"),
        DefaultInstall.values(cluster.imageRegistry, DefaultInstall.spec() + "  velero: true\n"));
    DefaultInstall.awaitReady(client, APPS);
  }

  @AfterAll
  void removeVelero() throws Exception {
    if (veleroStarted) {
      cluster.velero("down");
    }
  }

  @Test
  @Order(1)
  void theStorageClustersSnapshotClassIsTheOneVeleroUsesForTheDriver() {
    GenericKubernetesResource vsc =
        client
            .genericKubernetesResources("snapshot.storage.k8s.io/v1", "VolumeSnapshotClass")
            .withName(SNAPSHOTS)
            .get();
    assertThat(vsc.getMetadata().getLabels())
        .containsEntry("velero.io/csi-volumesnapshot-class", "true");
  }

  @Test
  @Order(2)
  void aNamespaceBackedUpOffALostNodeIsRestoredOnAnotherWithItsData() throws Exception {
    apps.create(apps.claim("xfs", XFS, "256Mi", false));
    apps.create(apps.claim("ext4", EXT4, "256Mi", false));
    apps.create(apps.claim("raw", XFS, "64Mi", true));
    startOn(lost);
    String writer = runningPod();
    assertThat(nodeOf(writer)).isEqualTo(lost);
    Await.until(
        "the application's 20th record",
        LONG,
        () -> records(writer, "/xfs/records").size(),
        n -> n >= 20);

    Map<String, String> written = writeBlobs(writer);
    int before = records(writer, "/xfs/records").size();
    long started = System.nanoTime();
    client.resource(backup()).create();
    GenericKubernetesResource done =
        Await.until(
            "backup " + BACKUP + " finished",
            LONG,
            () -> velero("v1", "Backup").withName(BACKUP).get(),
            VeleroE2E::isFinished);
    assertThat(Workloads.field(done, "status", "phase")).isEqualTo("Completed");
    LOG.info("backup of 3 claims took {} ms", (System.nanoTime() - started) / 1_000_000);
    List<GenericKubernetesResource> uploads =
        velero("v2alpha1", "DataUpload")
            .withLabel("velero.io/backup-name", BACKUP)
            .list()
            .getItems();
    assertThat(uploads).as("one data upload per claim").hasSize(3);
    for (GenericKubernetesResource upload : uploads) {
      assertThat(Workloads.field(upload, "status", "phase")).isEqualTo("Completed");
      assertThat(Workloads.field(upload, "status", "node"))
          .as("the snapshot's data is read on its node")
          .isEqualTo(lost);
      LOG.info(
          "upload of {}: {} bytes",
          Workloads.field(upload, "spec", "sourcePVC"),
          Workloads.field(upload, "status", "progress", "bytesDone"));
    }

    List<String> volumes =
        client.persistentVolumeClaims().inNamespace(APPS).list().getItems().stream()
            .map(c -> c.getSpec().getVolumeName())
            .toList();
    installed.nodeLossDeleteAfter("30s");
    cluster.stopNode(lost);
    try {
      client.nodes().withName(lost).delete();
      client.namespaces().withName(APPS).delete();
      Await.until(
          "namespace " + APPS + " gone with the lost node",
          LONG,
          () -> client.namespaces().withName(APPS).get(),
          Objects::isNull);
      for (String pv : volumes) {
        Await.until(
            "PV " + pv + " of the lost node deleted under nodeLoss: Delete",
            LONG,
            () -> client.persistentVolumes().withName(pv).get(),
            Objects::isNull);
      }

      started = System.nanoTime();
      client.resource(restore()).create();
      GenericKubernetesResource restored =
          Await.until(
              "restore of " + BACKUP + " finished",
              LONG,
              () -> velero("v1", "Restore").withName(BACKUP).get(),
              VeleroE2E::isFinished);
      assertThat(Workloads.field(restored, "status", "phase")).isEqualTo("Completed");
      String reader = runningPod();
      LOG.info(
          "restore of 3 claims took {} ms until the application ran",
          (System.nanoTime() - started) / 1_000_000);
      assertThat(nodeOf(reader)).isEqualTo(survivor);
      for (String claim : List.of("xfs", "ext4", "raw")) {
        assertThat(apps.nodesOf(apps.claimNamed(claim)))
            .as("claim %s restored on the surviving node", claim)
            .containsExactly(survivor);
      }
      assertUnbrokenRun(records(reader, "/xfs/records"), before, "xfs");
      assertUnbrokenRun(records(reader, "/ext4/records"), before, "ext4");
      assertUnbrokenRun(blockRecords(reader), before, "block");
      assertThat(blobSums(reader))
          .as("sha256 of the random data each claim held before the backup")
          .isEqualTo(written);
    } finally {
      installed.nodeLossDeleteAfter(null);
      cluster.startNode(lost);
    }
  }

  @Test
  @Order(3)
  void uninstallLeavesNothing() throws Exception {
    client.apps().deployments().inNamespace(APPS).withName(APP).delete();
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
  }

  // --- helpers --------------------------------------------------------------------------------

  /** The application, scheduled on {@code node} by cordoning every other node meanwhile. */
  private void startOn(String node) throws Exception {
    List<String> cordoned = cluster.cordonAllBut(node);
    try {
      client.resource(application()).create();
      runningPod();
    } finally {
      cluster.uncordon(cordoned);
    }
  }

  /**
   * One replica with the three claims, and no node of its own: where it runs is the scheduler's.
   */
  private Deployment application() {
    PodSpec spec = apps.pod("template", "raw", true, false).build().getSpec();
    spec.getContainers().get(0).setCommand(List.of("sh", "-c", WRITER));
    spec.getVolumes().get(0).setName("raw");
    spec.getContainers().get(0).getVolumeDevices().get(0).setName("raw");
    for (String fs : List.of("xfs", "ext4")) {
      Pod withClaim = apps.pod("template", fs, false, false).build();
      withClaim.getSpec().getVolumes().get(0).setName(fs);
      spec.getVolumes().add(withClaim.getSpec().getVolumes().get(0));
      var mount = withClaim.getSpec().getContainers().get(0).getVolumeMounts().get(0);
      mount.setName(fs);
      mount.setMountPath("/" + fs);
      spec.getContainers().get(0).getVolumeMounts().add(mount);
    }
    Map<String, String> labels = Map.of("app", APP);
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName(APP)
        .withNamespace(APPS)
        .endMetadata()
        .withNewSpec()
        .withReplicas(1)
        .withNewStrategy()
        .withType("Recreate")
        .endStrategy()
        .withNewSelector()
        .withMatchLabels(labels)
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(labels)
        .endMetadata()
        .withSpec(spec)
        .endTemplate()
        .endSpec()
        .build();
  }

  /** The application's pod once it runs. */
  private String runningPod() {
    return Await.until(
            "a running pod of " + APP,
            LONG,
            () ->
                client.pods().inNamespace(APPS).withLabel("app", APP).list().getItems().stream()
                    .filter(p -> "Running".equals(p.getStatus().getPhase()))
                    .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                    .findFirst()
                    .orElse(null),
            Objects::nonNull)
        .getMetadata()
        .getName();
  }

  private String nodeOf(String pod) {
    return client.pods().inNamespace(APPS).withName(pod).get().getSpec().getNodeName();
  }

  private List<String> records(String pod, String file) {
    return apps.sh(pod, "cat " + file).lines().toList();
  }

  /** The block device's records: its 16-byte slots up to the first that holds none. */
  private List<String> blockRecords(String pod) {
    return apps.sh(pod, "dd if=/dev/xvda bs=64k count=16 2>/dev/null | tr -d '\\000'")
        .lines()
        .map(line -> line.replaceFirst("^0+", ""))
        .toList();
  }

  /**
   * Writes {@value #BLOB_MIB} MiB of random data to each claim, beside the records (the block
   * claim's from {@value #BLOB_OFFSET_MIB} MiB on, far past its record slots), made durable, and
   * returns their sha256 by claim.
   */
  private Map<String, String> writeBlobs(String pod) {
    for (String fs : List.of("xfs", "ext4")) {
      apps.sh(
          pod, "dd if=/dev/urandom of=/" + fs + "/blob bs=1M count=" + BLOB_MIB + " conv=fsync");
    }
    apps.sh(
        pod,
        "dd if=/dev/urandom of=/dev/xvda bs=1M seek="
            + BLOB_OFFSET_MIB
            + " count="
            + BLOB_MIB
            + " conv=notrunc,fsync");
    return blobSums(pod);
  }

  /** The sha256 of each claim's blob of random data, by claim. */
  private Map<String, String> blobSums(String pod) {
    return Map.of(
        "xfs", sha256(pod, "cat /xfs/blob"),
        "ext4", sha256(pod, "cat /ext4/blob"),
        "block",
            sha256(
                pod,
                "dd if=/dev/xvda bs=1M skip="
                    + BLOB_OFFSET_MIB
                    + " count="
                    + BLOB_MIB
                    + " 2>/dev/null"));
  }

  private String sha256(String pod, String read) {
    return apps.sh(pod, read + " | sha256sum").split("\\s+")[0];
  }

  /** Records 1, 2, ... n with no gap or damage, and n at least {@code atLeast}. */
  private static void assertUnbrokenRun(List<String> records, int atLeast, String claim) {
    assertThat(records)
        .as("the %s claim's records: 1 to n in order", claim)
        .isEqualTo(IntStream.rangeClosed(1, records.size()).mapToObj(String::valueOf).toList());
    assertThat(records.size())
        .as("the %s claim holds every record written before the backup began", claim)
        .isGreaterThanOrEqualTo(atLeast);
  }

  private GenericKubernetesResource backup() {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("velero.io/v1")
        .withKind("Backup")
        .withNewMetadata()
        .withName(BACKUP)
        .withNamespace(VELERO)
        .endMetadata()
        .addToAdditionalProperties(
            "spec",
            Map.of(
                "includedNamespaces",
                List.of(APPS),
                "snapshotMoveData",
                true,
                "storageLocation",
                "default"))
        .build();
  }

  private GenericKubernetesResource restore() {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("velero.io/v1")
        .withKind("Restore")
        .withNewMetadata()
        .withName(BACKUP)
        .withNamespace(VELERO)
        .endMetadata()
        .addToAdditionalProperties("spec", Map.of("backupName", BACKUP))
        .build();
  }

  private NonNamespaceOperation<
          GenericKubernetesResource,
          GenericKubernetesResourceList,
          Resource<GenericKubernetesResource>>
      velero(String version, String kind) {
    return client.genericKubernetesResources("velero.io/" + version, kind).inNamespace(VELERO);
  }

  /** A Backup's or Restore's phase once Velero is done with it, whatever the outcome. */
  private static boolean isFinished(GenericKubernetesResource r) {
    Object phase = r == null ? null : Workloads.field(r, "status", "phase");
    return phase != null
        && List.of("Completed", "PartiallyFailed", "Failed", "FailedValidation")
            .contains(phase.toString());
  }
}

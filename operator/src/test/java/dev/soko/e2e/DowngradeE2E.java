package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.EXT4;
import static dev.soko.e2e.DefaultInstall.OPERATOR;
import static dev.soko.e2e.DefaultInstall.RELEASE;
import static dev.soko.e2e.DefaultInstall.SNAPSHOTS;
import static dev.soko.e2e.DefaultInstall.XFS;
import static dev.soko.e2e.GroupSnapshotE2E.GROUP_SNAPSHOTS;
import static dev.soko.e2e.Installed.condition;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClass;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClassBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * The rollback from the working tree to the newest release, by {@code helm rollback}, on real
 * nodes: the release installed and upgraded to the working tree (a rollback needs the revision to
 * return to), a claim with IO limits (a VolumeAttributesClass) and a group snapshot of two claims
 * made by the working tree's driver, random data written to each; then {@code helm rollback} to the
 * release. The working tree writes nothing to a pool that the release does not read (its on-disk
 * format is the release's), so the rollback must give a working release with nothing lost: every
 * node plugin Ready on the release's driver, the data's sha256 read back by new pods (staged again
 * by the release's driver), the IO limits the working tree recorded holding under the release, and
 * the group's members restoring to the data they were taken of.
 */
class DowngradeE2E extends RealClusterTier {
  private static final String APPS = "e2e-downgrade";
  private static final Duration LONG = Duration.ofSeconds(240);
  private static final String LIMITED_CLASS = "downgrade-limited";
  private static final IoLimitsE2E.Limits LIMITS =
      new IoLimitsE2E.Limits(200, 300, 8 << 20, 12 << 20);
  private static final String GROUP_LABEL = "downgrade-group";
  private static final String GROUP = "before-rollback";

  /** Claim name by pod and mount path: the limited claim's pod runs fio. */
  private static final String LIMITED = "limited";

  private static final String GROUPED = "grouped";
  private static final List<String> MEMBERS = List.of("member-a", "member-b");

  private static final String FIO =
      "fio --output-format=json --directory=/data --filename=fio.dat --size=16m --direct=1"
          + " --ioengine=libaio";

  /** How far a measured rate may be from its limit (as IoLimitsE2E). */
  private static final double TOLERANCE = 0.10;

  private LocalCluster.PreviousRelease previous;

  /** sha256 of each claim's blob, by claim, as written under the working tree. */
  private final Map<String, String> written = new TreeMap<>();

  DowngradeE2E() {
    super(APPS);
  }

  @BeforeAll
  void prepare() throws Exception {
    previous = LocalCluster.previousRelease();
  }

  @Test
  @Order(1)
  void theReleaseUpgradedToTheWorkingTree() throws Exception {
    assertThat(previous.version()).isNotEqualTo(cluster.projectVersion);
    DefaultInstall.replaceCrds(client, previous.chart());
    DefaultInstall.helm(
        cluster, "install", previous.chart(), DefaultInstall.values(cluster.imageRegistry));
    awaitRunning(previous.version());
    DefaultInstall.helm(
        cluster,
        "upgrade",
        LocalCluster.REPO.resolve("helm/soko"),
        DefaultInstall.values(cluster.imageRegistry));
    awaitRunning(cluster.projectVersion);
    apps.createNamespace();
  }

  @Test
  @Order(2)
  void theWorkingTreeMakesAClaimWithIoLimitsAndAGroupSnapshot() {
    client
        .resource(
            new VolumeAttributesClassBuilder()
                .withNewMetadata()
                .withName(LIMITED_CLASS)
                .endMetadata()
                .withDriverName(DefaultInstall.DRIVER)
                .withParameters(LIMITS.parameters())
                .build())
        .serverSideApply();
    PersistentVolumeClaim limited = apps.claim(LIMITED, EXT4, "64Mi", false);
    limited.getSpec().setVolumeAttributesClassName(LIMITED_CLASS);
    apps.create(limited);
    for (String member : MEMBERS) {
      PersistentVolumeClaim claim = apps.claim(member, XFS, "64Mi", false);
      claim.getMetadata().setLabels(Map.of(GROUP_LABEL, GROUP));
      apps.create(claim);
    }
    apps.create(limitedPod());
    apps.create(groupedPod());
    apps.awaitRunning(LIMITED, LONG);
    apps.awaitRunning(GROUPED, LONG);

    written.put(LIMITED, writeBlob(LIMITED, "/data"));
    written.put(MEMBERS.get(0), writeBlob(GROUPED, "/data"));
    written.put(MEMBERS.get(1), writeBlob(GROUPED, "/log"));
    apps.sh(LIMITED, FIO + " --fallocate=none --name=fill --rw=write --bs=1m --iodepth=4");
    assertWriteIopsAtTheLimit("under " + cluster.projectVersion);

    createGroup();
    Await.until(
        "group " + GROUP + " ready to use",
        LONG,
        () ->
            client
                .genericKubernetesResources(GROUP_SNAPSHOTS)
                .inNamespace(APPS)
                .withName(GROUP)
                .get(),
        g -> g != null && Boolean.TRUE.equals(Workloads.field(g, "status", "readyToUse")));
  }

  @Test
  @Order(3)
  void helmRollbackRunsTheReleaseOnThePoolsTheWorkingTreeWrote() throws Exception {
    // Revision 1 is the release's install, 2 the upgrade to the working tree.
    cluster.helm("rollback", RELEASE, "1", "--namespace", OPERATOR, "--wait", "--timeout", "4m");
    awaitRunning(previous.version());
  }

  @Test
  @Order(4)
  void theReleaseServesEveryVolumeWithNothingLost() {
    for (String pod : List.of(LIMITED, GROUPED)) {
      client.pods().inNamespace(APPS).withName(pod).delete();
      Await.until(
          "pod " + pod + " gone",
          LONG,
          () -> client.pods().inNamespace(APPS).withName(pod).get(),
          Objects::isNull);
    }
    // New pods: each volume is staged and published again, by the release's driver.
    apps.create(limitedPod());
    apps.create(groupedPod());
    apps.awaitRunning(LIMITED, LONG);
    apps.awaitRunning(GROUPED, LONG);
    assertThat(sha256(LIMITED, "/data")).as("claim " + LIMITED).isEqualTo(written.get(LIMITED));
    assertThat(sha256(GROUPED, "/data"))
        .as("claim " + MEMBERS.get(0))
        .isEqualTo(written.get(MEMBERS.get(0)));
    assertThat(sha256(GROUPED, "/log"))
        .as("claim " + MEMBERS.get(1))
        .isEqualTo(written.get(MEMBERS.get(1)));

    // The limits are the record's (the working tree's ModifyVolume-era field), applied to the new
    // pod's cgroup at the release driver's next pass, at most 2 s after the container starts.
    sleep(3_000);
    assertWriteIopsAtTheLimit("under " + previous.version() + " after the rollback");

    GenericKubernetesResource group =
        client.genericKubernetesResources(GROUP_SNAPSHOTS).inNamespace(APPS).withName(GROUP).get();
    String node = client.pods().inNamespace(APPS).withName(GROUPED).get().getSpec().getNodeName();
    for (String member : MEMBERS) {
      String restored = "restored-" + member;
      apps.create(apps.restoredClaim(restored, XFS, "64Mi", memberSnapshot(group, member)));
      apps.create(
          apps.pod(restored, restored, false, false)
              .editSpec()
              .withNodeSelector(Map.of("kubernetes.io/hostname", node))
              .endSpec());
    }
    for (String member : MEMBERS) {
      String restored = "restored-" + member;
      apps.awaitRunning(restored, LONG);
      assertThat(sha256(restored, "/data"))
          .as("member " + member + " of the group the working tree took, restored by the release")
          .isEqualTo(written.get(member));
    }
  }

  @Test
  @Order(5)
  void uninstallLeavesNothing() throws Exception {
    client.genericKubernetesResources(GROUP_SNAPSHOTS).inNamespace(APPS).delete();
    Await.until(
        "every VolumeGroupSnapshot gone",
        LONG,
        () ->
            client.genericKubernetesResources(GROUP_SNAPSHOTS).inNamespace(APPS).list().getItems(),
        List::isEmpty);
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    client.resources(VolumeAttributesClass.class).withName(LIMITED_CLASS).delete();
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
  }

  // --- helpers --------------------------------------------------------------------------------

  /**
   * Every node plugin Ready on the driver of {@code version} and the StorageCluster Ready in the
   * status written by the operator of {@code version}: a driver that refused a pool would answer
   * not ready and hold both.
   */
  private void awaitRunning(String version) {
    Await.until(
        "the node plugin rolled out with the images of " + version,
        LONG,
        installed::nodePluginDaemonSet,
        ds -> ds != null && installed.rolledOutTo(ds, version, cluster.nodes.size()));
    Await.until(
        "StorageCluster " + RELEASE + " Ready=True, reconciled by the operator of " + version,
        LONG,
        installed::storageCluster,
        sc ->
            sc.getStatus() != null
                && version.equals(sc.getStatus().getOperatorVersion())
                && Objects.equals(
                    sc.getStatus().getObservedGeneration(), sc.getMetadata().getGeneration())
                && "True".equals(condition(sc, "Ready")));
  }

  private PodBuilder limitedPod() {
    return apps.pod(LIMITED, LIMITED, false, false)
        .editSpec()
        .editFirstContainer()
        .withImage(cluster.imageRegistry + "/fio:1")
        .endContainer()
        .endSpec();
  }

  /** A pod with the group's first claim at /data and its second at /log. */
  private PodBuilder groupedPod() {
    return apps.pod(GROUPED, MEMBERS.get(0), false, false)
        .editSpec()
        .editFirstContainer()
        .addNewVolumeMount()
        .withName("log")
        .withMountPath("/log")
        .endVolumeMount()
        .endContainer()
        .addNewVolume()
        .withName("log")
        .withNewPersistentVolumeClaim(MEMBERS.get(1), false)
        .endVolume()
        .endSpec();
  }

  /** 8 MiB of random data in {@code dir}/blob, synced; returns its sha256. */
  private String writeBlob(String pod, String dir) {
    apps.sh(pod, "head -c 8388608 /dev/urandom > %s/blob && sync".formatted(dir));
    return sha256(pod, dir);
  }

  private String sha256(String pod, String dir) {
    return apps.sh(pod, "sha256sum %s/blob | cut -d' ' -f1".formatted(dir));
  }

  /** 4 KiB random direct writes for a few seconds, within {@link #TOLERANCE} of the limit. */
  private void assertWriteIopsAtTheLimit(String when) {
    String out =
        apps.sh(
            LIMITED,
            FIO
                + " --time_based --ramp_time=1 --runtime=4 --name=w --rw=randwrite --bs=4k"
                + " --iodepth=16");
    double iops;
    try {
      iops =
          new ObjectMapper()
              .readTree(out)
              .path("jobs")
              .path(0)
              .path("write")
              .path("iops")
              .asDouble();
    } catch (java.io.IOException e) {
      throw new AssertionError("fio's output is not JSON: " + e, e);
    }
    System.out.printf("claim %s, 4 KiB random writes %s: %.0f IOPS%n", LIMITED, when, iops);
    assertThat(iops)
        .as("4 KiB random writes %s, limit %d IOPS", when, LIMITS.writeIops())
        .isBetween(LIMITS.writeIops() * (1 - TOLERANCE), LIMITS.writeIops() * (1 + TOLERANCE));
  }

  private void createGroup() {
    client
        .genericKubernetesResources(GROUP_SNAPSHOTS)
        .inNamespace(APPS)
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion("groupsnapshot.storage.k8s.io/v1")
                .withKind("VolumeGroupSnapshot")
                .withNewMetadata()
                .withName(GROUP)
                .withNamespace(APPS)
                .endMetadata()
                .addToAdditionalProperties(
                    "spec",
                    Map.of(
                        "volumeGroupSnapshotClassName",
                        SNAPSHOTS,
                        "source",
                        Map.of("selector", Map.of("matchLabels", Map.of(GROUP_LABEL, GROUP)))))
                .build())
        .create();
  }

  /**
   * The member VolumeSnapshot of {@code group} taken of claim {@code source}: the
   * snapshot-controller names it {@code snapshot-} and the hex SHA-256 of the group's UID and the
   * member's volume handle.
   */
  private String memberSnapshot(GenericKubernetesResource group, String source) {
    String pv = apps.claimNamed(source).getSpec().getVolumeName();
    String handle =
        client.persistentVolumes().withName(pv).get().getSpec().getCsi().getVolumeHandle();
    return "snapshot-" + GroupSnapshotE2E.sha256Hex(group.getMetadata().getUid() + handle);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}

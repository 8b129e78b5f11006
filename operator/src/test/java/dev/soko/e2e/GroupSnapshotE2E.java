package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.SNAPSHOTS;
import static dev.soko.e2e.DefaultInstall.XFS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Volume group snapshots on real nodes, as an application spread over two claims uses them: a pod
 * appends numbered records to a data claim and then names each in a log claim, and group snapshots
 * taken while it writes restore into new claims that hold one instant: the log's last record is the
 * data's last, or the one before it (the writer was between the two appends), and it holds every
 * record the writer had written before the group was asked for. The writer runs on throughout (its
 * log grows between groups), and three successive groups hold strictly more records. Snapshots of
 * the two claims taken one after the other would differ by the thousands of records written
 * meanwhile. Deleting a group deletes its member snapshots. A group of claims on two nodes, each
 * with its own writer of wall-clock records, restores to records of one instant.
 */
class GroupSnapshotE2E extends RealClusterTier {
  private static final String APPS = "e2e-group-snapshots";
  private static final Duration LONG = Duration.ofSeconds(180);
  private static final String GROUP_LABEL = "app-group";
  private static final String WRITER = "writer";
  private static final int GROUPS = 3;

  static final ResourceDefinitionContext GROUP_SNAPSHOTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("groupsnapshot.storage.k8s.io")
          .withVersion("v1")
          .withPlural("volumegroupsnapshots")
          .withKind("VolumeGroupSnapshot")
          .withNamespaced(true)
          .build();

  GroupSnapshotE2E() {
    super(APPS);
  }

  @BeforeAll
  void install() throws Exception {
    DefaultInstall.helmInstallReady(cluster, client, APPS);
  }

  @Test
  @Order(1)
  void groupsTakenWhileAPodWritesRestoreToOneInstant() {
    for (String name : List.of("data", "log")) {
      PersistentVolumeClaim claim = apps.claim(name, XFS, "64Mi", false);
      claim.getMetadata().setLabels(Map.of(GROUP_LABEL, "writer"));
      apps.create(claim);
    }
    apps.create(
        twoClaimPod(
            WRITER,
            "data",
            "log",
            "i=0; while true; do i=$((i+1)); echo $i >> /data/records; echo $i >> /log/records;"
                + " done"));
    apps.awaitRunning(WRITER, LONG);
    // A restore is made on its pod's node, and the snapshots are on the writer's
    // (docs/snapshots.md).
    String writerNode =
        client.pods().inNamespace(APPS).withName(WRITER).get().getSpec().getNodeName();
    // The log's last record as the writer sees it just before each group is asked for, and once
    // after the last: every group's instant lies after its figure.
    long[] writtenBefore = new long[GROUPS + 1];
    for (int g = 1; g <= GROUPS; g++) {
      writtenBefore[g - 1] = writtenRecords();
      GenericKubernetesResource group = takeGroup("g" + g, "writer");
      restore(group, "g" + g);
      apps.create(
          twoClaimPod("reader-g" + g, "g" + g + "-data", "g" + g + "-log", "sleep 3600")
              .editSpec()
              .withNodeSelector(Map.of("kubernetes.io/hostname", writerNode))
              .endSpec());
    }
    writtenBefore[GROUPS] = writtenRecords();
    System.out.printf(
        "the writer's log before each group and after the last: %s%n",
        java.util.Arrays.toString(writtenBefore));
    for (int g = 1; g <= GROUPS; g++) {
      assertThat(writtenBefore[g])
          .as("the writer ran on between group g%d and what followed it", g)
          .isGreaterThan(writtenBefore[g - 1]);
    }
    long[] restoredLog = new long[GROUPS];
    for (int g = 1; g <= GROUPS; g++) {
      String reader = "reader-g" + g;
      apps.awaitRunning(reader, LONG);
      long data = Long.parseLong(apps.sh(reader, "tail -n 1 /data/records"));
      long log = Long.parseLong(apps.sh(reader, "tail -n 1 /log/records"));
      System.out.printf("group g%d restored: data's last record %d, log's %d%n", g, data, log);
      assertThat(log).as("group g%d: the log's last record", g).isPositive();
      assertThat(data - log)
          .as(
              "group g%d: records in the data (last %d) the log (last %d) does not name",
              g, data, log)
          .isBetween(0L, 1L);
      assertThat(log)
          .as("group g%d holds every record written before it was asked for", g)
          .isGreaterThanOrEqualTo(writtenBefore[g - 1]);
      restoredLog[g - 1] = log;
    }
    assertThat(restoredLog)
        .as("three successive groups hold strictly more records")
        .isSorted()
        .doesNotHaveDuplicates();
  }

  /** The last record the running writer has appended to its log claim. */
  private long writtenRecords() {
    String last = apps.sh(WRITER, "tail -n 1 /log/records");
    return last.isEmpty() ? 0 : Long.parseLong(last);
  }

  @Test
  @Order(2)
  void deletingAGroupDeletesItsMemberSnapshots() {
    assertThat(membersOf("g1")).as("member VolumeSnapshots of group g1").isEqualTo(2);
    client.genericKubernetesResources(GROUP_SNAPSHOTS).inNamespace(APPS).withName("g1").delete();
    Await.until("group g1's member VolumeSnapshots gone", LONG, () -> membersOf("g1"), n -> n == 0);
  }

  private long membersOf(String group) {
    return client
        .genericKubernetesResources(Workloads.VOLUME_SNAPSHOTS)
        .inNamespace(APPS)
        .list()
        .getItems()
        .stream()
        .filter(s -> group.equals(Workloads.field(s, "status", "volumeGroupSnapshotName")))
        .count();
  }

  /**
   * One claim per node, each with a writer that appends the machine's uptime in hundredths of a
   * second every few milliseconds and syncs it; a group of both claims restores to records of one
   * instant: each member's last record within {@link #ACROSS_NODES_BOUND_CENTISECONDS} of the
   * other's (both nodes were frozen together, so each writer stopped at the freeze), both after the
   * last record read before the group was asked for, and both writers ran on afterwards. Both nodes
   * share one clock (the kind nodes of one host). Copied one node after the other, the members
   * would differ by the seconds between the two copies.
   */
  @Test
  @Order(3)
  void aGroupOfClaimsOnTwoNodesRestoresToOneInstant() {
    List<String> nodes = cluster.nodes;
    assertThat(nodes).as("the tier's nodes").hasSizeGreaterThanOrEqualTo(2);
    for (int i = 0; i < 2; i++) {
      String name = "apart-" + i;
      PersistentVolumeClaim claim = apps.claim(name, XFS, "64Mi", false);
      claim.getMetadata().setLabels(Map.of(GROUP_LABEL, "apart"));
      apps.create(claim);
      apps.create(
          apps.pod(name, name, false, false)
              .editSpec()
              .editFirstContainer()
              .withCommand(
                  "sh",
                  "-c",
                  "while true; do tr -d . < /proc/uptime | cut -d' ' -f1 >> /data/records; sync;"
                      + " usleep 5000; done")
              .endContainer()
              .withNodeSelector(Map.of("kubernetes.io/hostname", nodes.get(i)))
              .endSpec());
    }
    long[] before = new long[2];
    for (int i = 0; i < 2; i++) {
      apps.awaitRunning("apart-" + i, LONG);
      String writer = "apart-" + i;
      Await.until("writer " + writer + " writing", LONG, () -> lastRecord(writer), r -> r > 0);
    }
    for (int i = 0; i < 2; i++) {
      before[i] = lastRecord("apart-" + i);
    }
    GenericKubernetesResource group = takeGroup("apart", "apart");
    for (int i = 0; i < 2; i++) {
      String source = "apart-" + i;
      apps.create(apps.restoredClaim("restored-" + source, XFS, "64Mi", member(group, source)));
      apps.create(
          apps.pod("reader-" + source, "restored-" + source, false, false)
              .editSpec()
              .withNodeSelector(Map.of("kubernetes.io/hostname", nodes.get(i)))
              .endSpec());
    }
    long[] restored = new long[2];
    for (int i = 0; i < 2; i++) {
      String reader = "reader-apart-" + i;
      apps.awaitRunning(reader, LONG);
      restored[i] = Long.parseLong(apps.sh(reader, "tail -n 1 /data/records"));
    }
    long[] after = {lastRecord("apart-0"), lastRecord("apart-1")};
    System.out.printf(
        "group across nodes %s: last records before %s, restored %s (%d cs apart), after %s%n",
        nodes.subList(0, 2),
        java.util.Arrays.toString(before),
        java.util.Arrays.toString(restored),
        Math.abs(restored[0] - restored[1]),
        java.util.Arrays.toString(after));
    for (int i = 0; i < 2; i++) {
      assertThat(restored[i])
          .as("member %d holds what its writer wrote before the group was asked for", i)
          .isGreaterThanOrEqualTo(before[i]);
      assertThat(after[i])
          .as("writer %d ran on after the group (its filesystem was thawed)", i)
          .isGreaterThan(restored[i]);
    }
    assertThat(Math.abs(restored[0] - restored[1]))
        .as("the two members' last records, one per node: one instant")
        .isLessThanOrEqualTo(ACROSS_NODES_BOUND_CENTISECONDS);
    client.genericKubernetesResources(GROUP_SNAPSHOTS).inNamespace(APPS).withName("apart").delete();
  }

  /**
   * The coordinator sends both Freezes together and each node freezes once it has recorded its part
   * (milliseconds), and each writer's last record is at most one write and sync before its freeze;
   * a group taken node after node (one request each through the API server) would be seconds apart.
   * Records are the machine's uptime in hundredths of a second (/proc/uptime: one clock for both
   * nodes' pods; busybox's date has no sub-second format), so the bound is 500 ms.
   */
  private static final long ACROSS_NODES_BOUND_CENTISECONDS = 50;

  private long lastRecord(String pod) {
    String last = apps.sh(pod, "tail -n 1 /data/records 2>/dev/null || true").strip();
    return last.isEmpty() ? 0 : Long.parseLong(last);
  }

  /** The member VolumeSnapshot of {@code group} taken of claim {@code source} (see restore). */
  private String member(GenericKubernetesResource group, String source) {
    String pv = apps.claimNamed(source).getSpec().getVolumeName();
    String handle =
        client.persistentVolumes().withName(pv).get().getSpec().getCsi().getVolumeHandle();
    return "snapshot-" + sha256Hex(group.getMetadata().getUid() + handle);
  }

  @Test
  @Order(4)
  void uninstallLeavesNothing() throws Exception {
    client.genericKubernetesResources(GROUP_SNAPSHOTS).inNamespace(APPS).delete();
    Await.until(
        "every VolumeGroupSnapshot gone",
        LONG,
        () ->
            client.genericKubernetesResources(GROUP_SNAPSHOTS).inNamespace(APPS).list().getItems(),
        List::isEmpty);
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
  }

  // --- helpers --------------------------------------------------------------------------------

  /** A pod with claim {@code first} at /data and {@code second} at /log, running {@code script}. */
  private PodBuilder twoClaimPod(String name, String first, String second, String script) {
    return apps.pod(name, first, false, false)
        .editSpec()
        .editFirstContainer()
        .withCommand("sh", "-c", script)
        .addNewVolumeMount()
        .withName("log")
        .withMountPath("/log")
        .endVolumeMount()
        .endContainer()
        .addNewVolume()
        .withName("log")
        .withNewPersistentVolumeClaim(second, false)
        .endVolume()
        .endSpec();
  }

  private void createGroup(String name, String members) {
    client
        .genericKubernetesResources(GROUP_SNAPSHOTS)
        .inNamespace(APPS)
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion("groupsnapshot.storage.k8s.io/v1")
                .withKind("VolumeGroupSnapshot")
                .withNewMetadata()
                .withName(name)
                .withNamespace(APPS)
                .endMetadata()
                .addToAdditionalProperties(
                    "spec",
                    Map.of(
                        "volumeGroupSnapshotClassName",
                        SNAPSHOTS,
                        "source",
                        Map.of("selector", Map.of("matchLabels", Map.of(GROUP_LABEL, members)))))
                .build())
        .create();
  }

  private GenericKubernetesResource group(String name) {
    return client
        .genericKubernetesResources(GROUP_SNAPSHOTS)
        .inNamespace(APPS)
        .withName(name)
        .get();
  }

  /** Creates a group of the claims labelled {@code members} and waits until it is ready. */
  private GenericKubernetesResource takeGroup(String name, String members) {
    createGroup(name, members);
    return Await.until(
        "group " + name + " ready to use",
        LONG,
        () -> group(name),
        g -> Boolean.TRUE.equals(Workloads.field(g, "status", "readyToUse")));
  }

  /**
   * Restores each member of {@code group} into a claim {@code <prefix>-<source claim>}. The
   * snapshot-controller names a member VolumeSnapshot {@code snapshot-} and the hex SHA-256 of the
   * group's UID and the member's volume handle (what Kubernetes' storage suite restores by).
   */
  private void restore(GenericKubernetesResource group, String prefix) {
    for (String source : List.of("data", "log")) {
      apps.create(apps.restoredClaim(prefix + "-" + source, XFS, "64Mi", member(group, source)));
    }
  }

  static String sha256Hex(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

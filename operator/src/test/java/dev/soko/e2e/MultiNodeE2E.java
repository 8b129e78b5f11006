package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.SYSTEM;
import static dev.soko.e2e.DefaultInstall.XFS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.OrphanedVolume;
import dev.soko.api.v1alpha1.OrphanedVolumes;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTermBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * What happens across real nodes: a StatefulSet whose replicas spread over the nodes, each with a
 * volume on its pod's node; the node plugin restarted on one node while a pod on another keeps
 * writing; a drain that takes every workload off a node and leaves no mount or loop device of its
 * volumes there while the node plugin stays, and an uncordon after which the replica comes back to
 * its data; a node that dies and whose Node is deleted: under {@code nodeLoss.policy: Retain} its
 * volumes are kept and reported and the node that comes back under its name serves them with their
 * data, under {@code Delete} they go after {@code deleteAfter} and a replica starts over on another
 * node. The default install.
 */
class MultiNodeE2E extends RealClusterTier {
  private static final String APPS = "e2e-nodes";
  private static final String SET = "db";
  private static final String SOLO = "solo";
  private static final Duration LONG = Duration.ofSeconds(180);

  MultiNodeE2E() {
    super(APPS);
  }

  @BeforeAll
  void install() throws Exception {
    assertThat(cluster.nodes)
        .as("the tier's cluster: two real nodes or more")
        .hasSizeGreaterThan(1);
    DefaultInstall.helmInstallReady(cluster, client, APPS);
  }

  @Test
  @Order(1)
  void aStatefulSetSpreadsOneReplicaPerNodeEachWithAVolumeOnItsNode() {
    int replicas = cluster.nodes.size();
    client.resource(statefulSet(replicas)).create();
    Await.until(
        "StatefulSet " + SET + " with " + replicas + " ready replicas",
        LONG,
        () -> client.apps().statefulSets().inNamespace(APPS).withName(SET).get(),
        s -> s.getStatus() != null && Objects.equals(s.getStatus().getReadyReplicas(), replicas));
    Set<String> nodes = new HashSet<>();
    for (int i = 0; i < replicas; i++) {
      String pod = SET + "-" + i;
      String node = nodeOf(pod);
      nodes.add(node);
      PersistentVolumeClaim claim = apps.claimNamed("data-" + pod);
      assertThat(apps.nodesOf(claim))
          .as("the volume of %s is pinned to the node its pod runs on", pod)
          .containsExactly(node);
      assertThat(apps.sh(pod, "echo " + pod + " > /data/id && sync && cat /data/id"))
          .isEqualTo(pod);
    }
    assertThat(nodes).as("one replica per node (anti-affinity)").hasSize(replicas);
  }

  @Test
  @Order(2)
  void restartingTheNodePluginOnOneNodeLeavesTheOtherNodesPodsAlone() throws Exception {
    String restarted = nodeOf(SET + "-0");
    String other = SET + "-1";
    String otherNode = nodeOf(other);
    ContainerStatus before = driverStatus(restarted);
    int otherPluginRestarts = driverStatus(otherNode).getRestartCount();
    cluster.killContainer(restarted, before.getContainerID());
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      written.add(apps.sh(other, "echo " + i + " >> /data/log && sync && tail -n 1 /data/log"));
      Thread.sleep(500);
    }
    assertThat(written).as("the other node's pod writes on through the restart").hasSize(10);
    Await.until(
        "the driver on " + restarted + " restarted and ready",
        LONG,
        () -> driverStatus(restarted),
        s -> s.getRestartCount() > before.getRestartCount() && Boolean.TRUE.equals(s.getReady()));
    assertThat(driverStatus(otherNode).getRestartCount())
        .as("the node plugin on " + otherNode)
        .isEqualTo(otherPluginRestarts);
    assertThat(pod(other).getStatus().getContainerStatuses().get(0).getRestartCount()).isZero();
    assertThat(apps.sh(SET + "-0", "cat /data/id")).isEqualTo(SET + "-0");
  }

  @Test
  @Order(3)
  void aDrainLeavesNoMountOrLoopDeviceOfItsVolumesAndTheReplicaComesBackToItsData()
      throws Exception {
    String replica = SET + "-1";
    String node = nodeOf(replica);
    PersistentVolumeClaim claim = apps.claimNamed("data-" + replica);
    String pv = claim.getSpec().getVolumeName();
    String handle =
        client.persistentVolumes().withName(pv).get().getSpec().getCsi().getVolumeHandle();
    String plugin = driverPod(node).getMetadata().getName();

    cluster.kubectl(
        "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=120s");

    Pod pending =
        Await.until(
            replica + " recreated and waiting for its node",
            LONG,
            () -> pod(replica),
            p -> p != null && p.getSpec().getNodeName() == null);
    assertThat(pending.getStatus().getPhase())
        .as("its volume is pinned to the cordoned node: it waits rather than move")
        .isEqualTo("Pending");
    String mounts = cluster.mounts(node);
    assertThat(mounts.lines())
        .as("mounts on %s of the drained volume %s", node, pv)
        .noneMatch(line -> line.contains(pv) || line.contains(handle));
    assertThat(LocalCluster.run(List.of("losetup", "-l", "-n", "-O", "NAME,BACK-FILE"), 10).lines())
        .as("loop devices of volume %s", handle)
        .noneMatch(line -> line.contains(handle));
    assertThat(driverPod(node).getMetadata().getName())
        .as("the node plugin stays on the drained node (a DaemonSet pod)")
        .isEqualTo(plugin);

    cluster.kubectl("uncordon", node);
    Await.until(
        replica + " running again",
        LONG,
        () -> pod(replica),
        p -> p != null && "Running".equals(p.getStatus().getPhase()));
    assertThat(nodeOf(replica)).isEqualTo(node);
    assertThat(apps.sh(replica, "cat /data/id")).isEqualTo(replica);
  }

  @Test
  @Order(4)
  void aLostNodesVolumesAreKeptUnderRetainAndServedWithTheirDataWhenTheNodeComesBack()
      throws Exception {
    // The first node runs the control plane and cannot die: the replica on another node is lost.
    String replica =
        IntStream.range(0, cluster.nodes.size())
            .mapToObj(i -> SET + "-" + i)
            .filter(r -> !cluster.node.equals(nodeOf(r)))
            .findFirst()
            .orElseThrow();
    String node = nodeOf(replica);
    String pv = apps.claimNamed("data-" + replica).getSpec().getVolumeName();

    cluster.stopNode(node);
    try {
      client.nodes().withName(node).delete();
      OrphanedVolumes orphaned =
          Await.until(
              "status.orphanedVolumes to list " + pv,
              LONG,
              () -> installed.storageCluster().getStatus().getOrphanedVolumes(),
              o ->
                  o != null
                      && o.volumes() != null
                      && o.volumes().stream().anyMatch(v -> pv.equals(v.pv())));
      OrphanedVolume volume =
          orphaned.volumes().stream().filter(v -> pv.equals(v.pv())).findFirst().orElseThrow();
      assertThat(volume.node()).isEqualTo(node);
      assertThat(volume.pvc()).isEqualTo(APPS + "/data-" + replica);
      assertThat(volume.action()).isEqualTo(OrphanedVolume.RETAIN);
      assertThat(client.persistentVolumes().withName(pv).get())
          .as("Retain deletes nothing")
          .isNotNull();
      assertThat(apps.claimNamed("data-" + replica).getStatus().getPhase()).isEqualTo("Bound");
      Pod waiting = pod(replica);
      assertThat(waiting == null ? null : waiting.getSpec().getNodeName())
          .as("the replica waits for its node: its volume lives there")
          .isIn(null, node);
    } finally {
      cluster.startNode(node);
    }
    // The pod object may outlive its containers (the node came back before the pod was collected):
    // the replica is back when it reads its data again.
    Await.until(
        replica + " on " + node + " reading the volume the node kept through its death",
        LONG,
        () -> apps.sh(replica, "cat /data/id"),
        replica::equals);
    assertThat(nodeOf(replica)).isEqualTo(node);
    assertThat(client.persistentVolumes().withName(pv).get()).isNotNull();
    Await.until(
        "status.orphanedVolumes empty again",
        LONG,
        () -> installed.storageCluster().getStatus().getOrphanedVolumes(),
        o -> o == null || o.volumes() == null || o.volumes().isEmpty());
  }

  @Test
  @Order(5)
  void underDeleteALostNodesVolumesGoAfterTheDelayAndTheReplicaStartsOverOnAnotherNode()
      throws Exception {
    String lost = cluster.nodes.get(1);
    // Placed on the node to be lost by cordoning every other one while it is scheduled.
    List<String> cordoned = cluster.cordonAllBut(lost);
    client.resource(solo()).create();
    Await.until(
        "StatefulSet " + SOLO + " ready",
        LONG,
        () -> client.apps().statefulSets().inNamespace(APPS).withName(SOLO).get(),
        s -> s.getStatus() != null && Objects.equals(s.getStatus().getReadyReplicas(), 1));
    cluster.uncordon(cordoned);
    String replica = SOLO + "-0";
    assertThat(nodeOf(replica)).isEqualTo(lost);
    apps.sh(replica, "echo before > /data/id && sync");
    String pv = apps.claimNamed("data-" + replica).getSpec().getVolumeName();
    installed.nodeLossDeleteAfter("30s");

    cluster.stopNode(lost);
    try {
      client.nodes().withName(lost).delete();
      Await.until(
          "PV " + pv + " deleted after deleteAfter",
          Duration.ofSeconds(240),
          () -> client.persistentVolumes().withName(pv).get(),
          Objects::isNull);
      Pod moved =
          Await.until(
              replica + " running on another node",
              LONG,
              () -> pod(replica),
              p -> p != null && "Running".equals(p.getStatus().getPhase()));
      assertThat(moved.getSpec().getNodeName()).isNotEqualTo(lost);
      assertThat(apps.exec(APPS, replica, "app", "cat /data/id").exitCode())
          .as("a new, empty volume: the lost one's data stayed on the lost node")
          .isNotZero();
      assertThat(apps.nodesOf(apps.claimNamed("data-" + replica)))
          .containsExactly(moved.getSpec().getNodeName());
    } finally {
      installed.nodeLossDeleteAfter(null);
      cluster.startNode(lost);
    }
  }

  @Test
  @Order(6)
  void uninstallRemovesEverything() throws Exception {
    client.apps().statefulSets().inNamespace(APPS).withName(SOLO).delete();
    client.apps().statefulSets().inNamespace(APPS).withName(SET).delete();
    Await.until(
        "the StatefulSet's pods gone",
        LONG,
        () -> client.pods().inNamespace(APPS).list().getItems(),
        List::isEmpty);
    client.persistentVolumeClaims().inNamespace(APPS).delete();
    Await.until(
        "every PV of the driver gone",
        LONG,
        () -> client.persistentVolumes().list().getItems(),
        List::isEmpty);
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
  }

  // --- helpers --------------------------------------------------------------------------------

  /** Replicas that must not share a node, each with a 320Mi XFS claim at /data. */
  private StatefulSet statefulSet(int replicas) {
    Pod template = apps.pod("template", "data", false, false).build();
    template.getSpec().setVolumes(List.of());
    Map<String, String> labels = Map.of("app", SET);
    return new StatefulSetBuilder()
        .withNewMetadata()
        .withName(SET)
        .withNamespace(APPS)
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withServiceName(SET)
        .withPodManagementPolicy("Parallel")
        .withNewSelector()
        .withMatchLabels(labels)
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(labels)
        .endMetadata()
        .withSpec(template.getSpec())
        .editSpec()
        .withNewAffinity()
        .withNewPodAntiAffinity()
        .withRequiredDuringSchedulingIgnoredDuringExecution(
            new PodAffinityTermBuilder()
                .withLabelSelector(new LabelSelectorBuilder().withMatchLabels(labels).build())
                .withTopologyKey("kubernetes.io/hostname")
                .build())
        .endPodAntiAffinity()
        .endAffinity()
        .endSpec()
        .endTemplate()
        .addNewVolumeClaimTemplate()
        .withNewMetadata()
        .withName("data")
        .endMetadata()
        .withSpec(apps.claim("data", XFS, "320Mi", false).getSpec())
        .endVolumeClaimTemplate()
        .endSpec()
        .build();
  }

  /** One replica that may run on any node, with a 320Mi XFS claim. */
  private StatefulSet solo() {
    StatefulSet solo = statefulSet(1);
    solo.getMetadata().setName(SOLO);
    Map<String, String> labels = Map.of("app", SOLO);
    solo.getSpec().getSelector().setMatchLabels(labels);
    solo.getSpec().getTemplate().getMetadata().setLabels(labels);
    solo.getSpec().getTemplate().getSpec().setAffinity(null);
    return solo;
  }

  private Pod pod(String name) {
    return client.pods().inNamespace(APPS).withName(name).get();
  }

  private String nodeOf(String pod) {
    return pod(pod).getSpec().getNodeName();
  }

  private Pod driverPod(String node) {
    return client
        .pods()
        .inNamespace(SYSTEM)
        .withLabels(installed.nodePluginDaemonSet().getSpec().getSelector().getMatchLabels())
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .filter(p -> node.equals(p.getSpec().getNodeName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no node plugin pod on " + node));
  }

  private ContainerStatus driverStatus(String node) {
    return driverPod(node).getStatus().getContainerStatuses().stream()
        .filter(s -> "soko-driver".equals(s.getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no soko-driver container on " + node));
  }
}

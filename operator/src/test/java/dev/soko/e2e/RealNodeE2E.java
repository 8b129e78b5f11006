package dev.soko.e2e;

import static dev.soko.e2e.Installed.condition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.PoolStatus;
import dev.soko.api.v1alpha1.PoolSummaryStatus;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeDriver;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Soko as a cluster admin meets it on a real node: {@code helm install} of the chart with its
 * StorageCluster, the node plugin as a privileged DaemonSet registering with the real kubelet, and
 * application pods (in a namespace at the cluster's baseline Pod Security level) that write to
 * their volumes while they are expanded, snapshotted, restored and used as raw block devices. The
 * steps build on each other, in order; the cluster comes from {@code hack/local-cluster.sh}.
 */
class RealNodeE2E extends RealClusterTier {
  private static final String RELEASE = DefaultInstall.RELEASE;
  private static final String OPERATOR = DefaultInstall.OPERATOR;
  private static final String SYSTEM = DefaultInstall.SYSTEM;
  private static final String APPS = "e2e-apps";
  private static final String DRIVER = DefaultInstall.DRIVER;
  private static final String XFS = DefaultInstall.XFS;
  private static final String EXT4 = DefaultInstall.EXT4;
  private static final String SNAPSHOTS = DefaultInstall.SNAPSHOTS;
  private static final Duration SHORT = Duration.ofSeconds(60);
  private static final Duration LONG = Duration.ofSeconds(180);

  private String writtenSum;

  RealNodeE2E() {
    super(APPS);
  }

  @Test
  @Order(1)
  void helmInstallsTheOperatorAndItsStorageClusterBecomesReady() throws Exception {
    DefaultInstall.helmInstall(cluster);
    // The operator is killed in the middle of the install: it must converge once it is back.
    Pod operator =
        Await.until(
            "the operator to start installing the driver",
            LONG,
            this::operatorPod,
            p ->
                p.getStatus().getContainerStatuses().stream()
                        .anyMatch(c -> c.getState().getRunning() != null)
                    && client.apps().daemonSets().inNamespace(SYSTEM).list().getItems().size()
                        == 1);
    cluster.killContainer(
        operator.getSpec().getNodeName(),
        operator.getStatus().getContainerStatuses().get(0).getContainerID());
    Await.until(
        "the operator to be restarted",
        LONG,
        () -> operatorPod().getStatus().getContainerStatuses().get(0).getRestartCount(),
        restarts -> restarts > 0);
    StorageCluster ready =
        Await.until(
            "StorageCluster " + RELEASE + " Ready=True",
            LONG,
            installed::storageCluster,
            sc -> "True".equals(condition(sc, "Ready")));
    assertThat(client.namespaces().withName(SYSTEM).get().getMetadata().getLabels())
        .as("the namespace the operator made for its privileged node plugin")
        .containsEntry("pod-security.kubernetes.io/enforce", "privileged");
    assertThat(client.namespaces().withName(OPERATOR).get().getMetadata().getLabels())
        .as("the operator's own namespace stays at the cluster's default level")
        .doesNotContainKey("pod-security.kubernetes.io/enforce");
    int nodes = cluster.nodes.size();
    assertThat(ready.getStatus().getNodes().desired()).isEqualTo(nodes);
    assertThat(ready.getStatus().getNodes().ready()).isEqualTo(nodes);
    assertThat(ready.getStatus().getNodes().registered())
        .as("nodes whose CSINode lists the driver")
        .isEqualTo(nodes);
    List<PoolStatus> pools =
        Await.until(
            "every node's pool with its free capacity in status",
            SHORT,
            () -> installed.storageCluster().getStatus().getPools(),
            list -> list.size() == nodes && list.stream().allMatch(p -> p.available() != null));
    assertThat(pools)
        .extracting(PoolStatus::node)
        .containsExactlyInAnyOrderElementsOf(cluster.nodes);
    // The first node's pool is an 8 GiB filesystem, the others' 16 GiB; the spec sets no
    // capacity, so all of it is offered.
    assertThat(pools)
        .extracting(p -> Quantity.getAmountInBytes(new Quantity(p.available())).longValue())
        .as("each pool's free capacity, from its node's StorageNode or CSIStorageCapacity")
        .allMatch(bytes -> bytes > 7L << 30);
    // Each node's driver reports the pool in its StorageNode, which the status sums.
    PoolSummaryStatus summary =
        Await.until(
                "the pool in status.poolSummary, from the nodes' StorageNodes",
                SHORT,
                () -> installed.storageCluster().getStatus().getPoolSummary(),
                s -> s != null && !s.isEmpty() && s.get(0).ready() == nodes)
            .get(0);
    assertThat(summary.refused()).isZero();
    assertThat(summary.notReporting()).isZero();
    assertThat(summary.sizeBytes())
        .as("the pools' filesystems: 8 GiB, and 16 GiB on every other node")
        .isGreaterThan((7L << 30) + (nodes - 1) * (15L << 30));
  }

  @Test
  @Order(2)
  void theClusterCanReachNothingOffTheMachine() throws Exception {
    for (String netns : cluster.netnses()) {
      for (String family : List.of("-4", "-6")) {
        String routes = LocalCluster.run(List.of("ip", family, "-n", netns, "route", "show"), 10);
        assertThat(routes.lines())
            .as("routes of the node's network namespace " + netns + " (" + family + ")")
            .noneMatch(r -> r.startsWith("default"))
            .allMatch(
                r ->
                    r.startsWith("10.")
                        || r.startsWith("fe80::")
                        || r.startsWith("::1 ")
                        || r.isBlank());
      }
    }
    assertThat(cluster.hostNetwork())
        .as("the host's interfaces and routes, as before the cluster started")
        .isEqualTo(Files.readString(cluster.stateDir.resolve("host-network.before")));
  }

  @Test
  @Order(3)
  void eachKubeletRegistersTheDriverWithItsNodeIdAndTopologyKey() {
    for (String node : cluster.nodes) {
      // Ready means the pods passed /readyz (registered); the CSINode is written by the kubelet
      // in its own time, so it is awaited.
      CSINodeDriver registered =
          Await.until(
              "the driver in the CSINode of " + node,
              SHORT,
              () -> registeredDriver(node),
              Objects::nonNull);
      assertThat(registered.getNodeID()).isEqualTo(node);
      assertThat(registered.getTopologyKeys()).containsExactly("topology.soko.dev/node");
      assertThat(client.nodes().withName(node).get().getMetadata().getLabels())
          .containsEntry("topology.soko.dev/node", node);
    }
  }

  @Test
  @Order(4)
  void renderPrintsTheContainersTheOperatorApplied() throws Exception {
    StorageCluster sc = installed.storageCluster();
    String version = sc.getStatus().getKubernetesVersion();
    sc.setStatus(null);
    sc.getMetadata().setManagedFields(null);
    Path file = Files.createTempFile("soko-e2e-sc", ".yaml");
    try {
      Files.writeString(file, Serialization.asYaml(sc));
      // stdout alone: the render notes on stderr what it leaves out (keys issued at run time).
      String rendered =
          LocalCluster.stdout(
              List.of(
                  "java",
                  "-jar",
                  LocalCluster.REPO.resolve("operator/target/soko-operator.jar").toString(),
                  "render",
                  "--kubernetes-version",
                  version,
                  "--image-registry",
                  cluster.imageRegistry,
                  file.toString()),
              120);
      Map<String, List<String>> offline = new TreeMap<>();
      for (Object o : client.load(new ByteArrayInputStream(rendered.getBytes())).items()) {
        offline.putAll(containers((HasMetadata) o));
      }
      Map<String, List<String>> applied = new TreeMap<>();
      applied.putAll(
          containers(client.apps().daemonSets().inNamespace(SYSTEM).list().getItems().get(0)));
      applied.putAll(
          containers(client.apps().deployments().inNamespace(SYSTEM).list().getItems().get(0)));
      assertThat(applied).as("containers of the applied DaemonSet and Deployment").isNotEmpty();
      assertThat(offline).as("what `render` prints for review").isEqualTo(applied);
    } finally {
      Files.deleteIfExists(file);
    }
  }

  @Test
  @Order(5)
  void aPodWritesToAVolumeThatIsStagedAndPublishedByTheKubelet() {
    apps.createNamespace();
    assertThat(client.namespaces().withName(APPS).get().getMetadata().getLabels())
        .as("the application namespace stays at the cluster's default Pod Security level")
        .doesNotContainKey("pod-security.kubernetes.io/enforce");
    apps.create(apps.claim("data", XFS, "320Mi", false));
    apps.create(apps.pod("writer", "data", false, false));
    apps.awaitRunning("writer", LONG);
    apps.sh("writer", "dd if=/dev/urandom of=/data/blob bs=1M count=16 2>/dev/null && sync");
    writtenSum = apps.sh("writer", "sha256sum /data/blob | cut -d' ' -f1");
    assertThat(apps.sh("writer", "grep ' /data ' /proc/mounts"))
        .as("the volume is an xfs filesystem on a loop device")
        .contains("/dev/loop")
        .contains(" xfs ");
    PersistentVolumeClaim claim = apps.claimNamed("data");
    assertThat(claim.getStatus().getPhase()).isEqualTo("Bound");
    assertThat(apps.nodesOf(claim))
        .as("the volume is pinned to the node that holds it: the one its pod runs on")
        .containsExactly(writerNode());
  }

  @Test
  @Order(6)
  void aVolumeExpandedWhileItsPodRunsShowsTheNewSizeInThePod() {
    long before = filesystemBytes("writer");
    apps.resize("data", "640Mi");
    long after =
        Await.until(
            "the pod to see the grown filesystem",
            LONG,
            () -> filesystemBytes("writer"),
            bytes -> bytes > before + (200L << 20));
    assertThat(after).isLessThanOrEqualTo(640L << 20);
    Await.until(
        "PVC capacity 640Mi", SHORT, () -> apps.capacityBytes("data"), b -> b == 640L << 20);
    assertThat(apps.sh("writer", "sha256sum /data/blob | cut -d' ' -f1")).isEqualTo(writtenSum);
  }

  @Test
  @Order(7)
  void aSnapshotRestoredIntoANewVolumeHoldsTheSameBytes() {
    GenericKubernetesResource snap = apps.snapshot("snap", "data", SNAPSHOTS, LONG);
    PersistentVolumeClaim restored = apps.restoredClaim("restored", XFS, "640Mi", "snap");
    apps.create(restored);
    apps.create(apps.pod("reader", "restored", false, false));
    apps.awaitRunning("reader", LONG);
    assertThat(apps.sh("reader", "sha256sum /data/blob | cut -d' ' -f1"))
        .as("the restored volume holds the snapshot's bytes")
        .isEqualTo(writtenSum);
    assertThat(Workloads.field(snap, "status", "restoreSize")).isNotNull();
  }

  @Test
  @Order(8)
  void aBlockVolumeIsARawDeviceThePodWritesAndReadsBack() {
    apps.create(apps.claim("raw", EXT4, "64Mi", true));
    apps.create(apps.pod("block", "raw", true, false));
    apps.awaitRunning("block", LONG);
    String sum =
        apps.sh(
            "block",
            "dd if=/dev/urandom of=/tmp/chunk bs=1M count=4 2>/dev/null"
                + " && dd if=/tmp/chunk of=/dev/xvda bs=1M conv=fsync 2>/dev/null"
                + " && sha256sum /tmp/chunk | cut -d' ' -f1");
    assertThat(
            apps.sh(
                "block", "dd if=/dev/xvda bs=1M count=4 2>/dev/null | sha256sum | cut -d' ' -f1"))
        .isEqualTo(sum);
    assertThat(apps.sh("block", "blockdev --getsize64 /dev/xvda"))
        .isEqualTo(String.valueOf(64L << 20));
  }

  @Test
  @Order(9)
  void aPodWithFsGroupGetsAVolumeItsGroupCanWrite() {
    apps.create(apps.claim("shared", EXT4, "64Mi", false));
    PodBuilder pod = apps.pod("grouped", "shared", false, false);
    pod.editSpec()
        .withNewSecurityContext()
        .withRunAsUser(1000L)
        .withRunAsGroup(1000L)
        .withFsGroup(2000L)
        .endSecurityContext()
        .endSpec();
    apps.create(pod);
    apps.awaitRunning("grouped", LONG);
    apps.sh("grouped", "echo hello > /data/by-user-1000");
    assertThat(apps.sh("grouped", "stat -c '%g' /data")).isEqualTo("2000");
    assertThat(apps.sh("grouped", "stat -c '%u:%g' /data/by-user-1000")).isEqualTo("1000:2000");
  }

  @Test
  @Order(10)
  void aReadOnlyClaimIsMountedReadOnly() {
    client.pods().inNamespace(APPS).withName("grouped").withGracePeriod(1).delete();
    Await.until(
        "pod grouped gone",
        SHORT,
        () -> client.pods().inNamespace(APPS).withName("grouped").get(),
        Objects::isNull);
    apps.create(apps.pod("readonly", "shared", false, true));
    apps.awaitRunning("readonly", LONG);
    assertThat(apps.sh("readonly", "cat /data/by-user-1000")).isEqualTo("hello");
    Workloads.Result write = apps.exec(APPS, "readonly", "app", "touch /data/other");
    assertThat(write.exitCode()).as("writing to a read-only mount fails").isNotZero();
    assertThat(write.err()).contains("Read-only file system");
  }

  @Test
  @Order(11)
  void aClaimLargerThanAnyPoolStaysPendingWithAnEventThatSaysWhy() {
    apps.create(apps.claim("huge", XFS, "100Gi", false));
    apps.create(apps.pod("too-big", "huge", false, false));
    Event event = apps.awaitEvent("too-big", "FailedScheduling", LONG);
    assertThat(event.getMessage()).contains("enough free storage");
    assertThat(apps.claimNamed("huge").getStatus().getPhase()).isEqualTo("Pending");
    client.pods().inNamespace(APPS).withName("too-big").withGracePeriod(0).delete();
    client.persistentVolumeClaims().inNamespace(APPS).withName("huge").delete();
  }

  @Test
  @Order(12)
  void aClaimThatDoesNotFitTheFirstNodesPoolIsPlacedOnTheSecondNode() throws Exception {
    String nodeB = cluster.nodes.get(1);
    Await.until(
        "CSIStorageCapacity of " + nodeB,
        LONG,
        () -> client.storage().v1().csiStorageCapacities().inNamespace(SYSTEM).list().getItems(),
        list ->
            list.stream()
                .anyMatch(
                    c ->
                        XFS.equals(c.getStorageClassName())
                            && nodeB.equals(
                                c.getNodeTopology().getMatchLabels().get("topology.soko.dev/node"))
                            && Quantity.getAmountInBytes(c.getCapacity()).longValue() > 12L << 30));
    apps.create(apps.claim("big", XFS, "12Gi", false));
    apps.create(apps.pod("placed", "big", false, false));
    Pod placed = apps.awaitRunning("placed", LONG);
    assertThat(placed.getSpec().getNodeName())
        .as(
            "the scheduler places the pod where its 12Gi claim fits: not the first node's 8 GiB pool")
        .isEqualTo(nodeB);
    PersistentVolumeClaim big = apps.awaitBound("big", LONG);
    assertThat(apps.nodesOf(big)).containsExactly(nodeB);
    assertThat(apps.sh("placed", "echo on-b > /data/f && sync && cat /data/f"))
        .as("the pod on the second node writes to its volume and reads it back")
        .isEqualTo("on-b");
    client.pods().inNamespace(APPS).withName("placed").withGracePeriod(0).delete();
    client.persistentVolumeClaims().inNamespace(APPS).withName("big").delete();
    Await.until(
        "the second node's volume deleted",
        LONG,
        () -> client.persistentVolumes().withName(big.getSpec().getVolumeName()).get(),
        Objects::isNull);
  }

  @Test
  @Order(13)
  void killingTheDriverLeavesPublishedVolumesWorkingAndItRegistersAgain() throws Exception {
    String node = writerNode();
    Pod plugin = installed.nodePluginPod(node);
    ContainerStatus before = containerStatus(plugin, "soko-driver");
    cluster.killContainer(node, before.getContainerID());
    apps.sh("writer", "echo during > /data/during-restart && sync");
    assertThat(apps.sh("writer", "sha256sum /data/blob | cut -d' ' -f1")).isEqualTo(writtenSum);
    Await.until(
        "the driver container to restart",
        LONG,
        () -> containerStatus(installed.nodePluginPod(node), "soko-driver"),
        s -> s.getRestartCount() > before.getRestartCount() && Boolean.TRUE.equals(s.getReady()));
    Await.until(
        "the CSINode to list the driver again",
        LONG,
        () -> registeredDriver(node),
        Objects::nonNull);
    apps.create(apps.claim("after-restart", XFS, "320Mi", false));
    apps.create(apps.pod("after-restart", "after-restart", false, false));
    apps.awaitRunning("after-restart", LONG);
    assertThat(apps.sh("after-restart", "echo ok > /data/f && cat /data/f")).isEqualTo("ok");
  }

  @Test
  @Order(14)
  void restartingTheKubeletAndTheRuntimeKeepsRunningPodsAndTheirVolumes() throws Exception {
    String node = writerNode();
    cluster.restart("containerd", node);
    cluster.restart("kubelet", node);
    Await.until("node Ready", LONG, () -> nodeReady(node), ready -> ready);
    // The kubelet answers exec again a moment after it reports Ready.
    String during =
        Await.until(
            "exec in pod writer after the restarts",
            SHORT,
            () -> apps.sh("writer", "cat /data/during-restart"),
            Objects::nonNull);
    assertThat(during).isEqualTo("during");
    assertThat(apps.sh("writer", "sha256sum /data/blob | cut -d' ' -f1")).isEqualTo(writtenSum);
    apps.create(apps.pod("after-kubelet", "after-restart", false, false));
    client.pods().inNamespace(APPS).withName("after-restart").withGracePeriod(1).delete();
    apps.awaitRunning("after-kubelet", LONG);
    assertThat(apps.sh("after-kubelet", "cat /data/f")).isEqualTo("ok");
  }

  @Test
  @Order(15)
  void anImageOverrideOnTheStorageClusterRollsTheNodePlugin() throws Exception {
    String image = cluster.imageRegistry + "/soko-driver:e2e-override";
    cluster.tagImage(cluster.imageRegistry + "/soko-driver:" + cluster.projectVersion, image);
    String node = writerNode();
    String before = installed.nodePluginPod(node).getMetadata().getName();
    client
        .resources(StorageCluster.class)
        .withName(RELEASE)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"spec\": {\"driver\": {\"image\": \"" + image + "\"}}}");
    Pod rolled =
        Await.until(
            "a node plugin pod running " + image,
            LONG,
            () -> installed.nodePluginPod(node),
            p ->
                !p.getMetadata().getName().equals(before)
                    && image.equals(p.getSpec().getContainers().get(0).getImage())
                    && Boolean.TRUE.equals(containerStatus(p, "soko-driver").getReady()));
    // The runtime reports the image under the first of its names; its ID is what ran.
    assertThat(containerStatus(rolled, "soko-driver").getImageID()).isNotBlank();
    Await.until(
        "StorageCluster Ready again",
        LONG,
        installed::storageCluster,
        sc -> "True".equals(condition(sc, "Ready")));
    assertThat(apps.sh("writer", "sha256sum /data/blob | cut -d' ' -f1")).isEqualTo(writtenSum);
  }

  @Test
  @Order(16)
  void noComponentLoggedAPermissionErrorOrAnOperatorError() {
    StringBuilder sidecars = new StringBuilder();
    for (Pod pod : client.pods().inNamespace(SYSTEM).list().getItems()) {
      for (var c : pod.getSpec().getContainers()) {
        if (!"soko-driver".equals(c.getName())) {
          sidecars.append(
              client
                  .pods()
                  .inNamespace(SYSTEM)
                  .withName(pod.getMetadata().getName())
                  .inContainer(c.getName())
                  .getLog());
        }
      }
    }
    // The nodes' csi-snapshotters run with CSIVolumeGroupSnapshot off and never read the group
    // API; the controller's csi-group-snapshotter (the cluster serves the group API) holds the
    // group rules: no refusal at all.
    assertThat(
            sidecars
                .toString()
                .lines()
                .filter(l -> l.toLowerCase(Locale.ROOT).contains("forbidden")))
        .as("RBAC refusals in the sidecars' logs")
        .isEmpty();
    String operatorLog =
        client
            .pods()
            .inNamespace(OPERATOR)
            .withName(operatorPod().getMetadata().getName())
            .getLog();
    assertThat(operatorLog.lines().filter(l -> l.contains(" ERROR ")))
        .as("errors in the operator's log")
        .isEmpty();
  }

  @Test
  @Order(17)
  void uninstallIsRefusedWhileVolumesExistAndRemovesEverythingAfterwards() throws Exception {
    client.resources(StorageCluster.class).withName(RELEASE).delete();
    StorageCluster blocked =
        Await.until(
            "status to say that deletion is blocked",
            SHORT,
            installed::storageCluster,
            sc ->
                sc.getStatus().getConditions().stream()
                    .anyMatch(c -> "DeletionBlocked".equals(c.getReason())));
    String message =
        blocked.getStatus().getConditions().stream()
            .filter(c -> "DeletionBlocked".equals(c.getReason()))
            .findFirst()
            .orElseThrow()
            .getMessage();
    assertThat(message).contains(apps.claimNamed("data").getSpec().getVolumeName());
    assertThat(client.storage().v1().csiDrivers().withName(DRIVER).get())
        .as("the CSIDriver is kept while volumes exist")
        .isNotNull();

    client.pods().inNamespace(APPS).withGracePeriod(1).delete();
    apps.deleteSnapshots();
    client.persistentVolumeClaims().inNamespace(APPS).delete();
    Await.until(
        "every PV of the driver gone",
        LONG,
        () -> client.persistentVolumes().list().getItems(),
        List::isEmpty);
    Await.until(
        "StorageCluster gone",
        LONG,
        () -> client.resources(StorageCluster.class).withName(RELEASE).get(),
        Objects::isNull);
    assertThat(client.storage().v1().csiDrivers().withName(DRIVER).get()).isNull();
    assertThat(client.storage().v1().storageClasses().withName(XFS).get()).isNull();
    Await.until(
        "namespace " + SYSTEM + " gone",
        LONG,
        () -> client.namespaces().withName(SYSTEM).get(),
        Objects::isNull);
    cluster.helm("uninstall", RELEASE, "--namespace", OPERATOR, "--wait", "--timeout", "2m");
    Await.until(
        "no pod left in " + OPERATOR,
        LONG,
        () -> client.pods().inNamespace(OPERATOR).list().getItems(),
        List::isEmpty);
    assertThat(client.apps().daemonSets().inAnyNamespace().list().getItems()).isEmpty();
    client.namespaces().withName(APPS).delete();
  }

  // --- helpers --------------------------------------------------------------------------------

  private CSINodeDriver registeredDriver(String nodeName) {
    CSINode node = client.storage().v1().csiNodes().withName(nodeName).get();
    return node == null || node.getSpec().getDrivers() == null
        ? null
        : node.getSpec().getDrivers().stream()
            .filter(d -> DRIVER.equals(d.getName()))
            .findFirst()
            .orElse(null);
  }

  private long filesystemBytes(String pod) {
    // df -k: 1 KiB blocks, the second field of the second line.
    return Long.parseLong(apps.sh(pod, "df -k /data | awk 'NR == 2 {print $2}'")) * 1024;
  }

  /** The node the first workload (pod writer) runs on: the node the restarts are tried on. */
  private String writerNode() {
    return client.pods().inNamespace(APPS).withName("writer").get().getSpec().getNodeName();
  }

  /** Each container's name (qualified by its workload) and args. */
  private static Map<String, List<String>> containers(HasMetadata o) {
    PodSpec spec;
    if (o instanceof DaemonSet ds) {
      spec = ds.getSpec().getTemplate().getSpec();
    } else if (o instanceof Deployment d) {
      spec = d.getSpec().getTemplate().getSpec();
    } else {
      return Map.of();
    }
    Map<String, List<String>> out = new TreeMap<>();
    for (var c : spec.getContainers()) {
      out.put(o.getKind() + "/" + c.getName() + " " + c.getImage(), c.getArgs());
    }
    return out;
  }

  private Pod operatorPod() {
    return client.pods().inNamespace(OPERATOR).list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no operator pod in " + OPERATOR));
  }

  private static ContainerStatus containerStatus(Pod pod, String container) {
    return pod.getStatus().getContainerStatuses().stream()
        .filter(s -> container.equals(s.getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no status of container " + container));
  }

  private boolean nodeReady(String node) {
    return client.nodes().withName(node).get().getStatus().getConditions().stream()
        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }
}

package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.SnapshotSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DesiredStateTest {
  private final VersionsTable table = VersionsTable.load();

  private DesiredState desired(StorageCluster sc, String version) {
    return DesiredState.of(sc, table, ClusterFacts.offline(KubernetesVersion.parse(version)));
  }

  private static Container container(PodSpec pod, String name) {
    return pod.getContainers().stream()
        .filter(c -> c.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container " + name));
  }

  /** What the driver makes of these flags: {@link DriverArgumentsTest}. */
  @Test
  void theDriverGetsTheSpecsPathsAndPortsAndNoPoolsInControllerMode() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setMetricsPort(9809);
    sc.getSpec().getDriver().setMaxVolumesPerNode(40);
    sc.getSpec().getNodePlugin().setKubeletDir("/data/kubelet/");
    DesiredState d = desired(sc, "1.34");
    Container node = container(d.nodeDaemonSet().getSpec().getTemplate().getSpec(), "soko-driver");
    Container ctrl =
        container(d.controllerDeployment().getSpec().getTemplate().getSpec(), "soko-driver");
    assertThat(node.getArgs())
        .contains(
            "--allowed-path-root=/data/kubelet",
            "--kubelet-dir=/data/kubelet",
            "--max-volumes-per-node=40",
            "--metrics-address=0.0.0.0:9809");
    assertThat(ctrl.getArgs())
        .contains("--mode=controller", "--metrics-address=0.0.0.0:9809")
        .noneMatch(a -> a.startsWith("--pool") || a.startsWith("--max-volumes-per-node"));
    assertThat(node.getPorts())
        .extracting("name")
        .containsExactlyInAnyOrderElementsOf(
            DataTls.rendered(d.images())
                ? List.of("metrics", "healthz", DataTls.PORT_NAME)
                : List.of("metrics", "healthz"));
    assertThat(ctrl.getPorts()).extracting("containerPort").contains(9809);
  }

  @Test
  void poolPlacementRulesReachTheDriverFlagOnlyWhenNotDefault() {
    StorageCluster sc = Fixtures.sample();
    PoolSpec pool = sc.getSpec().getPools().get(0);
    assertThat(NodeDaemonSet.poolFlag(pool)).doesNotContain("requireMountPoint", "allowRoot");
    pool.setRequireMountPoint(true);
    pool.setAllowRootFilesystem(true);
    assertThat(NodeDaemonSet.poolFlag(pool))
        .endsWith(",fs=xfs:ext4,requireMountPoint=true,allowRootFilesystem=true");
  }

  /** The driver's parser reads this very text (DriverArgumentsTest, PoolSpecTest). */
  @Test
  void aPoolsNodeSelectorReachesTheDriverFlagOneLabelPerFieldSortedByKey() {
    StorageCluster sc = Fixtures.sample();
    PoolSpec pool = sc.getSpec().getPools().get(0);
    assertThat(NodeDaemonSet.poolFlag(pool)).doesNotContain("nodeSelector");
    pool.setNodeSelector(new java.util.LinkedHashMap<>());
    assertThat(NodeDaemonSet.poolFlag(pool)).doesNotContain("nodeSelector");
    pool.getNodeSelector().put("soko.dev/disk", "nvme");
    pool.getNodeSelector().put("node.kubernetes.io/instance-type", "m5.large");
    pool.getNodeSelector().put("empty", "");
    assertThat(NodeDaemonSet.poolFlag(pool))
        .isEqualTo(
            "name=nvme,path=/var/lib/soko/nvme,capacity=100Gi,overprovision=2.0,fs=xfs:ext4"
                + ",nodeSelector:empty=,nodeSelector:node.kubernetes.io/instance-type=m5.large"
                + ",nodeSelector:soko.dev/disk=nvme");
    // Every node keeps the pool's hostPath, selected or not: one template serves every node.
    assertThat(desired(sc, "1.34").nodeDaemonSet().getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getName().equals("pool-nvme"))
        .extracting(v -> v.getHostPath().getType())
        .containsExactly("DirectoryOrCreate");
  }

  @Test
  void nodeDaemonSetRunsDriverWithPoolsAndDistributedProvisioning() {
    DesiredState d = desired(Fixtures.sample(), "1.34.1");
    PodSpec pod = d.nodeDaemonSet().getSpec().getTemplate().getSpec();
    assertThat(d.nodeDaemonSet().getMetadata().getNamespace()).isEqualTo("soko-fast");
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .containsExactly("soko-driver", "csi-provisioner", "csi-snapshotter");
    Container driver = container(pod, "soko-driver");
    assertThat(driver.getArgs())
        .contains(
            "--mode=node",
            "--endpoint=unix:///csi/csi.sock",
            "--node-id=$(NODE_NAME)",
            "--driver-name=fast.csi.soko.dev",
            "--log-level=debug",
            "--pool=name=nvme,path=/var/lib/soko/nvme,capacity=100Gi,overprovision=2.0,fs=xfs:ext4",
            "--allowed-path-root=/var/lib/kubelet");
    assertThat(driver.getSecurityContext().getPrivileged()).isTrue();
    assertThat(driver.getEnv().get(0).getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("spec.nodeName");
    // The StorageCluster names the node's StorageNode report and labels it for the operator.
    assertThat(driver.getEnv().get(1).getName()).isEqualTo("SOKO_STORAGE_CLUSTER");
    assertThat(driver.getEnv().get(1).getValue()).isEqualTo("fast");
    assertThat(driver.getVolumeMounts())
        .filteredOn(m -> "Bidirectional".equals(m.getMountPropagation()))
        .extracting(VolumeMount::getMountPath)
        .contains("/var/lib/kubelet/pods", "/var/lib/kubelet/plugins", "/var/lib/soko/nvme");
    // Only the driver is privileged.
    assertThat(pod.getContainers())
        .filteredOn(c -> c.getSecurityContext() != null)
        .extracting(Container::getName)
        .containsExactly("soko-driver");
    assertThat(container(pod, "csi-provisioner").getArgs())
        .contains("--node-deployment=true", "--enable-capacity=true", "--strict-topology=true");
    assertThat(container(pod, "csi-snapshotter").getArgs()).contains("--node-deployment=true");
    assertThat(driver.getArgs()).contains("--label-imported-snapshots=true");
    assertThat(pod.getImagePullSecrets()).extracting("name").containsExactly("regcred");
  }

  @Test
  void sidecarImagesFollowKubernetesVersion() {
    String latest =
        container(
                desired(Fixtures.sample(), "v1.34.0")
                    .nodeDaemonSet()
                    .getSpec()
                    .getTemplate()
                    .getSpec(),
                "csi-provisioner")
            .getImage();
    String conservative =
        container(
                desired(Fixtures.sample(), "1.29")
                    .nodeDaemonSet()
                    .getSpec()
                    .getTemplate()
                    .getSpec(),
                "csi-provisioner")
            .getImage();
    assertThat(latest).endsWith("csi-provisioner:v6.4.0");
    assertThat(conservative).endsWith("csi-provisioner:v4.0.1");
    assertThat(desired(Fixtures.sample(), "1.36").images().get(Component.RESIZER))
        .endsWith("csi-resizer:v2.3.0");
    assertThat(desired(Fixtures.sample(), "1.32").images().get(Component.RESIZER))
        .endsWith("csi-resizer:v1.13.2");
    assertThat(table.supports(KubernetesVersion.parse("1.27"))).isFalse();
  }

  @Test
  void registryQualifiesTableImagesButNotOverrides() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getImages().setRegistry("mirror.example:5000/k8s");
    sc.getSpec().getImages().getOverrides().setResizer("registry.example/my/resizer:v9");
    DesiredState d = desired(sc, "1.34");
    assertThat(d.images().get(Component.PROVISIONER))
        .isEqualTo("mirror.example:5000/k8s/sig-storage/csi-provisioner:v6.4.0");
    assertThat(d.images().get(Component.DRIVER)).startsWith("mirror.example:5000/k8s/soko-driver:");
    assertThat(d.images().get(Component.RESIZER)).isEqualTo("registry.example/my/resizer:v9");
    assertThat(d.images().registry()).isEqualTo("mirror.example:5000/k8s");
    assertThat(
            container(d.controllerDeployment().getSpec().getTemplate().getSpec(), "csi-resizer")
                .getImage())
        .isEqualTo("registry.example/my/resizer:v9");
  }

  @Test
  void specRegistryWinsOverTheOperatorDefaultAndNeitherLeavesImagesUnqualified() {
    VersionsTable withDefault = table.withDefaultRegistry("registry.example/default");
    ClusterFacts facts = ClusterFacts.offline(KubernetesVersion.parse("1.34"));
    StorageCluster plain = Fixtures.sample();
    assertThat(DesiredState.of(plain, withDefault, facts).images().get(Component.PROVISIONER))
        .isEqualTo("registry.example/default/sig-storage/csi-provisioner:v6.4.0");
    StorageCluster own = Fixtures.sidecars();
    own.getSpec().getImages().setRegistry("registry.example/own");
    assertThat(DesiredState.of(own, withDefault, facts).images().get(Component.REGISTRAR))
        .isEqualTo("registry.example/own/sig-storage/csi-node-driver-registrar:v2.17.0");
    DesiredState none = DesiredState.of(Fixtures.sample(), table, facts);
    assertThat(none.images().registry()).isNull();
    assertThat(none.images().get(Component.PROVISIONER))
        .isEqualTo("sig-storage/csi-provisioner:v6.4.0");
  }

  @Test
  void shippedTableNamesNoRegistryHost() {
    for (String key : List.of("csi-provisioner", "csi-resizer", "node-driver-registrar")) {
      for (String minor : List.of("1.28", "1.31", "1.34")) {
        String image = table.rowFor(KubernetesVersion.parse(minor)).images().get(key);
        assertThat(ResolvedImages.hasRegistryHost(image)).as(image).isFalse();
      }
    }
    assertThat(ResolvedImages.hasRegistryHost(table.driverImage())).isFalse();
    assertThat(ResolvedImages.hasRegistryHost("registry.example/a/b:v1")).isTrue();
    assertThat(ResolvedImages.hasRegistryHost("localhost/a:v1")).isTrue();
    assertThat(ResolvedImages.hasRegistryHost("sig-storage/a:v1")).isFalse();
  }

  @Test
  void controllerRunsResizerWithLeaderElectionAndNoHealthMonitor() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getController().setReplicas(2);
    PodSpec pod = desired(sc, "1.34").controllerDeployment().getSpec().getTemplate().getSpec();
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .as("offline every API counts as served: the group snapshotter and changed block tracking")
        .containsExactly(
            "soko-driver", "csi-resizer", "csi-group-snapshotter", "csi-snapshot-metadata");
    assertThat(container(pod, "soko-driver").getArgs()).contains("--mode=controller");
    assertThat(container(pod, "csi-resizer").getArgs())
        .contains("--leader-election=true", "--leader-election-namespace=soko-fast");

    sc.getSpec().getFeatures().setVolumeHealthMonitor(true);
    DesiredState d = desired(sc, "1.34");
    assertThat(d.controllerDeployment().getSpec().getReplicas()).isEqualTo(2);
    // The controller-mode driver advertises EXPAND_VOLUME only; the monitor would exit at start.
    assertThat(d.controllerDeployment().getSpec().getTemplate().getSpec().getContainers())
        .extracting(Container::getName)
        .doesNotContain("csi-external-health-monitor-controller");
    assertThat(d.rbac())
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain("soko:fast:health-monitor");
    assertThat(d.notices()).anyMatch(n -> n.contains("volumeHealthMonitor"));
  }

  @Test
  void capacityTrackingAndSnapshotsCanBeTurnedOff() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getFeatures().setCapacityTracking(false);
    sc.getSpec().getSnapshots().setEnabled(false);
    DesiredState d = desired(sc, "1.34");
    assertThat(d.csiDriver().getSpec().getStorageCapacity()).isFalse();
    assertThat(d.csiDriver().getSpec().getAttachRequired()).isFalse();
    assertThat(d.csiDriver().getSpec().getPodInfoOnMount()).isTrue();
    assertThat(d.snapshotClass()).isNull();
    assertThat(d.groupSnapshotClass()).isNull();
    PodSpec pod = d.nodeDaemonSet().getSpec().getTemplate().getSpec();
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .doesNotContain("csi-snapshotter");
    assertThat(controllerPod(d).getContainers())
        .extracting(Container::getName)
        .containsExactly("soko-driver", "csi-resizer");
    assertThat(groupRules(d)).as("no group snapshot rule without snapshots").isEmpty();
    assertThat(container(pod, "csi-provisioner").getArgs())
        .doesNotContain("--enable-capacity=true");
    assertThat(d.rbac())
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain("soko:fast:snapshotter", "soko:fast:group-snapshotter", "fast-capacity");
    assertThat(container(pod, "soko-driver").getArgs())
        .as("no csi-snapshotter on the node: no content to label")
        .noneMatch(a -> a.startsWith("--label-imported-snapshots"));
  }

  /**
   * The driver labels imported snapshot contents (--label-imported-snapshots) under the node
   * account with csi-snapshotter's rules: listing and watching the unlabelled contents and patching
   * the label on. Nothing more is granted for it, and nothing less may be.
   */
  @Test
  void theNodeAccountMayListWatchAndPatchSnapshotContentsWhereTheDriverLabelsImports() {
    DesiredState d = desired(Fixtures.sample(), "1.34");
    List<HasMetadata> rbac = d.rbac();
    String nodeAccount = d.names().serviceAccount(Names.NODE);
    List<String> boundToNode =
        rbac.stream()
            .filter(o -> o instanceof io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding)
            .map(io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding.class::cast)
            .filter(b -> b.getSubjects().stream().anyMatch(s -> nodeAccount.equals(s.getName())))
            .map(b -> b.getRoleRef().getName())
            .toList();
    List<String> contentVerbs =
        rbac.stream()
            .filter(
                o -> o instanceof ClusterRole && boundToNode.contains(o.getMetadata().getName()))
            .flatMap(o -> ((ClusterRole) o).getRules().stream())
            .filter(r -> r.getApiGroups().contains("snapshot.storage.k8s.io"))
            .filter(r -> r.getResources().contains("volumesnapshotcontents"))
            .flatMap(r -> r.getVerbs().stream())
            .toList();
    assertThat(contentVerbs).contains("list", "watch", "patch");
    assertThat(contentVerbs).doesNotContain("create", "delete", "deletecollection", "*");
  }

  @Test
  void snapshotClassOnlyWhenTheClusterServesTheSnapshotApi() {
    KubernetesVersion v = KubernetesVersion.parse("1.34");
    ClusterFacts noSnapshots = new ClusterFacts(v, Set.of(), true, null, null, null, null);
    DesiredState d = DesiredState.of(Fixtures.sample(), table, noSnapshots);
    assertThat(d.snapshotClass()).isNull();
    ClusterFacts served =
        new ClusterFacts(
            v, Set.of(ClusterFacts.VOLUME_SNAPSHOT_CLASSES), true, null, null, null, null);
    HasMetadata vsc = DesiredState.of(Fixtures.sample(), table, served).snapshotClass();
    assertThat(vsc.getMetadata().getName()).isEqualTo("fast-snapshots");
  }

  @Test
  void theSnapshotClassCarriesVelerosLabelOnlyWhenAskedFor() {
    ClusterFacts served =
        new ClusterFacts(
            KubernetesVersion.parse("1.34"),
            Set.of(ClusterFacts.VOLUME_SNAPSHOT_CLASSES),
            true,
            null,
            null,
            null,
            null);
    StorageCluster sc = Fixtures.sample();
    assertThat(DesiredState.of(sc, table, served).snapshotClass().getMetadata().getLabels())
        .doesNotContainKey("velero.io/csi-volumesnapshot-class");
    sc.getSpec().getSnapshots().setVelero(true);
    assertThat(DesiredState.of(sc, table, served).snapshotClass().getMetadata().getLabels())
        .containsEntry("velero.io/csi-volumesnapshot-class", "true");
  }

  /**
   * The cluster serves the snapshot API and, when {@code groupApi}, the whole v1 group snapshot API
   * (classes, contents, group snapshots); {@code foreignDefault} is someone else's default group
   * class.
   */
  private static ClusterFacts groupApi(String version, boolean groupApi, String foreignDefault) {
    Set<String> apis = new HashSet<>(Set.of(ClusterFacts.VOLUME_SNAPSHOT_CLASSES));
    if (groupApi) {
      apis.addAll(ClusterFacts.GROUP_SNAPSHOT_APIS);
    }
    return new ClusterFacts(
        KubernetesVersion.parse(version), apis, true, null, null, foreignDefault, null);
  }

  private static PodSpec controllerPod(DesiredState d) {
    return d.controllerDeployment().getSpec().getTemplate().getSpec();
  }

  private static PodSpec nodePod(DesiredState d) {
    return d.nodeDaemonSet().getSpec().getTemplate().getSpec();
  }

  /** The rules on the group snapshot API granted to anyone. */
  private static List<String> groupRules(DesiredState d) {
    return d.rbac().stream()
        .filter(o -> o instanceof ClusterRole || o instanceof Role)
        .flatMap(
            o ->
                (o instanceof ClusterRole cr ? cr.getRules() : ((Role) o).getRules())
                    .stream()
                        .filter(r -> r.getApiGroups().contains("groupsnapshot.storage.k8s.io"))
                        .map(r -> o.getMetadata().getName() + " " + r.getResources()))
        .toList();
  }

  /** Whether the controller pod runs the group snapshotter and its driver is told about it. */
  private static boolean runsGroupSnapshotter(DesiredState d) {
    PodSpec pod = controllerPod(d);
    boolean container =
        pod.getContainers().stream()
            .anyMatch(c -> c.getName().equals(ControllerDeployment.GROUP_SNAPSHOTTER));
    boolean env =
        container(pod, "soko-driver").getEnv().stream()
            .anyMatch(e -> e.getName().equals(ControllerDeployment.GROUP_SNAPSHOTTER_ENV));
    assertThat(env).as("the driver's variable goes with the container").isEqualTo(container);
    return container;
  }

  /**
   * With snapshots on, the group API served, the 1.34 row and this release's driver, the controller
   * pod runs one more csi-snapshotter for groups: --node-deployment with a fixed identity that no
   * node can have, the group gate on, the controller's socket, no leader election (v8.7.0 exits
   * with both) and no port; the controller's driver is told the identity in the same render.
   */
  @Test
  void theControllerRunsTheGroupSnapshotterWhereGroupSnapshotsRun() {
    DesiredState d = DesiredState.of(Fixtures.sample(), table, groupApi("1.34", true, null));
    PodSpec pod = controllerPod(d);
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .containsExactly("soko-driver", "csi-resizer", "csi-group-snapshotter");
    Container groups = container(pod, "csi-group-snapshotter");
    assertThat(groups.getImage()).isEqualTo(d.images().get(Component.SNAPSHOTTER));
    assertThat(groups.getImage()).endsWith("csi-snapshotter:v8.7.0");
    assertThat(groups.getArgs())
        .containsExactly(
            "--csi-address=/csi/csi.sock",
            "--node-deployment=true",
            "--feature-gates=CSIVolumeGroupSnapshot=true",
            "--timeout=60s",
            "--v=2");
    assertThat(groups.getEnv())
        .extracting(EnvVar::getName, EnvVar::getValue)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("NODE_NAME", "soko_groups"));
    assertThat(groups.getPorts()).isNullOrEmpty();
    assertThat(groups.getLivenessProbe()).isNull();
    assertThat(groups.getVolumeMounts())
        .extracting(VolumeMount::getName, VolumeMount::getMountPath)
        .as("the socket the controller's driver serves, as the resizer has it")
        .containsExactlyElementsOf(
            container(pod, "csi-resizer").getVolumeMounts().stream()
                .map(m -> org.assertj.core.groups.Tuple.tuple(m.getName(), m.getMountPath()))
                .toList());
    assertThat(container(pod, "soko-driver").getEnv())
        .filteredOn(e -> e.getName().equals("SOKO_GROUP_SNAPSHOTTER"))
        .extracting(EnvVar::getValue)
        .containsExactly(ControllerDeployment.GROUP_SNAPSHOTTER_IDENTITY);
    assertThat(ControllerDeployment.GROUP_SNAPSHOTTER_IDENTITY)
        .as("a label value (the managed-by selector) that is no node name (a DNS subdomain)")
        .matches("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
        .doesNotMatch("[a-z0-9.-]+");
  }

  /**
   * The group snapshotter takes its resources from its own key of controller.resources; the nodes'
   * csi-snapshotter key is theirs alone.
   */
  @Test
  void theGroupSnapshotterTakesItsOwnResources() {
    StorageCluster sc = Fixtures.sample();
    ResourceRequirements own =
        new ResourceRequirementsBuilder().addToLimits("memory", new Quantity("64Mi")).build();
    ResourceRequirements nodes =
        new ResourceRequirementsBuilder().addToLimits("memory", new Quantity("96Mi")).build();
    sc.getSpec().getController().setResources(Map.of("csi-group-snapshotter", own));
    sc.getSpec().getNodePlugin().setResources(Map.of("csi-snapshotter", nodes));
    DesiredState d = DesiredState.of(sc, table, groupApi("1.34", true, null));
    assertThat(container(controllerPod(d), "csi-group-snapshotter").getResources()).isEqualTo(own);
    assertThat(container(nodePod(d), "csi-snapshotter").getResources()).isEqualTo(nodes);
    assertThat(container(controllerPod(d), "csi-resizer").getResources()).isNull();
  }

  /** The node pods are not touched: their snapshotter keeps the group gate off, API or not. */
  @Test
  void theNodesSnapshotterKeepsGroupsOffAndTheNodePodsDoNotRollWithTheGroupApi() {
    DesiredState on = DesiredState.of(Fixtures.sample(), table, groupApi("1.34", true, null));
    DesiredState off = DesiredState.of(Fixtures.sample(), table, groupApi("1.34", false, null));
    assertThat(container(nodePod(on), "csi-snapshotter").getArgs())
        .contains("--node-deployment=true", "--feature-gates=CSIVolumeGroupSnapshot=false");
    assertThat(on.nodeDaemonSet()).isEqualTo(off.nodeDaemonSet());
    assertThat(runsGroupSnapshotter(on)).isTrue();
    assertThat(runsGroupSnapshotter(off)).isFalse();
    assertThat(on.controllerDeployment().getSpec().getTemplate())
        .as("the controller pods roll when the group API appears or goes")
        .isNotEqualTo(off.controllerDeployment().getSpec().getTemplate());
  }

  @Test
  void noGroupPathWithoutTheWholeGroupApiOrSnapshotsOrOnOlderRows() {
    assertThat(
            runsGroupSnapshotter(
                DesiredState.of(Fixtures.sample(), table, groupApi("1.34", false, null))))
        .as("no group API")
        .isFalse();
    ClusterFacts classesOnly =
        new ClusterFacts(
            KubernetesVersion.parse("1.34"),
            Set.of(
                ClusterFacts.VOLUME_SNAPSHOT_CLASSES, ClusterFacts.VOLUME_GROUP_SNAPSHOT_CLASSES),
            true,
            null,
            null,
            null,
            null);
    DesiredState partial = DesiredState.of(Fixtures.sample(), table, classesOnly);
    assertThat(runsGroupSnapshotter(partial)).as("the group classes alone").isFalse();
    assertThat(partial.groupSnapshotClass()).isNull();

    StorageCluster off = Fixtures.sample();
    off.getSpec().getSnapshots().setEnabled(false);
    DesiredState noSnapshots = DesiredState.of(off, table, groupApi("1.34", true, null));
    assertThat(runsGroupSnapshotter(noSnapshots)).as("snapshots off").isFalse();
    assertThat(noSnapshots.all()).noneMatch(o -> o.getKind().contains("SnapshotClass"));
    assertThat(groupRules(noSnapshots)).isEmpty();

    for (String version : List.of("1.33", "1.31", "1.30", "1.28")) {
      DesiredState d = DesiredState.of(Fixtures.sample(), table, groupApi(version, true, null));
      assertThat(runsGroupSnapshotter(d)).as(version).isFalse();
      assertThat(d.groupSnapshotClass()).as(version).isNull();
      assertThat(d.snapshotClass()).as(version).isNotNull();
      assertThat(groupRules(d)).as(version).isEmpty();
    }
  }

  @Test
  void theGroupSnapshotClassIsTheSnapshotClassesTwinLabelledForTheGroupSnapshotter() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setDeletionPolicy(SnapshotSpec.DeletionPolicy.Retain);
    DesiredState d = DesiredState.of(sc, table, groupApi("1.34", true, null));
    GenericKubernetesResource group = d.groupSnapshotClass();
    assertThat(group.getApiVersion()).isEqualTo("groupsnapshot.storage.k8s.io/v1");
    assertThat(group.getKind()).isEqualTo("VolumeGroupSnapshotClass");
    assertThat(group.getMetadata().getName())
        .isEqualTo(d.snapshotClass().getMetadata().getName())
        .isEqualTo("fast-snapshots");
    assertThat(group.getMetadata().getNamespace()).isNull();
    assertThat(group.getMetadata().getLabels())
        .containsEntry(Names.LABEL_CLUSTER, "fast")
        .containsEntry("snapshot.storage.kubernetes.io/managed-by", "soko_groups");
    assertThat(d.snapshotClass().getMetadata().getLabels())
        .as("the nodes' snapshotters read VolumeSnapshotClasses unfiltered")
        .doesNotContainKey("snapshot.storage.kubernetes.io/managed-by");
    assertThat(group.getAdditionalProperties())
        .containsOnly(
            Map.entry("driver", "fast.csi.soko.dev"), Map.entry("deletionPolicy", "Retain"));
    assertThat(d.all()).contains(group);

    sc.getSpec().getSnapshots().setClassName("soko-snapshots");
    assertThat(
            DesiredState.of(sc, table, groupApi("1.34", true, null))
                .groupSnapshotClass()
                .getMetadata()
                .getName())
        .isEqualTo("soko-snapshots");
  }

  @Test
  void theGroupSnapshotClassIsDefaultAsAskedUnlessAnotherGroupClassIs() {
    String annotation = "groupsnapshot.storage.kubernetes.io/is-default-class";
    StorageCluster sc = Fixtures.sample();
    assertThat(
            DesiredState.of(sc, table, groupApi("1.34", true, null))
                .groupSnapshotClass()
                .getMetadata()
                .getAnnotations())
        .as("not asked for")
        .isNullOrEmpty();
    sc.getSpec().getSnapshots().setDefaultClass(true);
    DesiredState mine = DesiredState.of(sc, table, groupApi("1.34", true, null));
    assertThat(mine.groupSnapshotClass().getMetadata().getAnnotations())
        .containsExactly(Map.entry(annotation, "true"));
    DesiredState theirs = DesiredState.of(sc, table, groupApi("1.34", true, "their-groups"));
    assertThat(theirs.groupSnapshotClass().getMetadata().getAnnotations())
        .as("another group class is the default: kept")
        .isNullOrEmpty();
    assertThat(theirs.snapshotClass().getMetadata().getAnnotations())
        .as("the group class's default says nothing of the snapshot class's")
        .containsEntry("snapshot.storage.kubernetes.io/is-default-class", "true");
  }

  /**
   * The controller's account holds csi-snapshotter's rules for the group snapshotter, group rules
   * included; the node's account holds no group rule.
   */
  @Test
  void theControllerAccountHoldsTheGroupSnapshottersRulesAndTheNodeAccountNoGroupRule() {
    DesiredState d = DesiredState.of(Fixtures.sample(), table, groupApi("1.34", true, null));
    String controller = d.names().serviceAccount(Names.CONTROLLER);
    ClusterRoleBinding binding =
        d.rbac().stream()
            .filter(o -> o.getMetadata().getName().equals("soko:fast:group-snapshotter"))
            .filter(ClusterRoleBinding.class::isInstance)
            .map(ClusterRoleBinding.class::cast)
            .findFirst()
            .orElseThrow();
    assertThat(binding.getSubjects())
        .extracting(s -> s.getName() + "/" + s.getNamespace())
        .containsExactly(controller + "/soko-fast");
    ClusterRole role =
        d.rbac().stream()
            .filter(o -> o.getMetadata().getName().equals(binding.getRoleRef().getName()))
            .filter(ClusterRole.class::isInstance)
            .map(ClusterRole.class::cast)
            .findFirst()
            .orElseThrow();
    assertThat(role.getRules())
        .extracting(r -> r.getApiGroups().get(0) + "/" + r.getResources() + " " + r.getVerbs())
        .containsExactly(
            "/[events] [list, watch, create, update, patch]",
            "snapshot.storage.k8s.io/[volumesnapshotclasses] [get, list, watch]",
            "snapshot.storage.k8s.io/[volumesnapshotcontents] [get, list, watch, update, patch]",
            "snapshot.storage.k8s.io/[volumesnapshotcontents/status] [update, patch]",
            "groupsnapshot.storage.k8s.io/[volumegroupsnapshotclasses] [get, list, watch]",
            "groupsnapshot.storage.k8s.io/[volumegroupsnapshotcontents] [get, list, watch, update,"
                + " patch]",
            "groupsnapshot.storage.k8s.io/[volumegroupsnapshotcontents/status] [update, patch]",
            "groupsnapshot.storage.k8s.io/[volumegroupsnapshotclasses] [patch]");
    assertThat(groupRules(d))
        .as("group rules only in the group snapshotter's role")
        .allMatch(r -> r.startsWith("soko:fast:group-snapshotter "));
  }

  @Test
  void defaultStorageClassNeverStolen() {
    KubernetesVersion v = KubernetesVersion.parse("1.34");
    DesiredState mine = DesiredState.of(Fixtures.sample(), table, ClusterFacts.offline(v));
    assertThat(mine.storageClasses().get(0).getMetadata().getAnnotations())
        .containsEntry("storageclass.kubernetes.io/is-default-class", "true");
    DesiredState other =
        DesiredState.of(
            Fixtures.sample(),
            table,
            new ClusterFacts(v, Set.of(), false, "gp2", null, null, null));
    assertThat(other.storageClasses().get(0).getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(mine.storageClasses().get(0).getParameters())
        .containsOnlyKeys("pool", "csi.storage.k8s.io/fstype")
        .containsEntry("pool", "nvme")
        .containsEntry("csi.storage.k8s.io/fstype", "xfs");
    assertThat(mine.storageClasses().get(0).getVolumeBindingMode())
        .isEqualTo("WaitForFirstConsumer");
    assertThat(mine.storageClasses().get(0).getAllowVolumeExpansion()).isTrue();
  }

  @Test
  void theNodePluginMayWriteItsStorageNodeAndEventsButNotListOrWatchThem() {
    List<HasMetadata> rbac = desired(Fixtures.sample(), "1.34").rbac();
    ClusterRole report =
        rbac.stream()
            .filter(
                o -> o instanceof ClusterRole && o.getMetadata().getName().endsWith(":pool-report"))
            .map(ClusterRole.class::cast)
            .findFirst()
            .orElseThrow();
    assertThat(report.getRules())
        .extracting(r -> r.getApiGroups().get(0) + "/" + r.getResources() + " " + r.getVerbs())
        .containsExactly(
            "soko.dev/[storagenodes] [get, create, patch]",
            "/[events] [create, patch]",
            "/[nodes] [get, watch]");
    assertThat(rbac)
        .filteredOn(o -> o.getMetadata().getName().endsWith(":pool-report"))
        .extracting(HasMetadata::getKind)
        .containsExactly("ClusterRole", "ClusterRoleBinding");
  }

  @Test
  void theNodePluginReadsPersistentVolumesToFindTheNodeOfACloneOnAnotherNodesSource() {
    List<HasMetadata> rbac = desired(Fixtures.sample(), "1.34").rbac();
    java.util.Set<String> nodeRoles =
        rbac.stream()
            .filter(o -> o instanceof io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding)
            .map(io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding.class::cast)
            .filter(
                b ->
                    b.getSubjects().stream()
                        .anyMatch(
                            s ->
                                "ServiceAccount".equals(s.getKind())
                                    && s.getName().endsWith("-node")))
            .map(b -> b.getRoleRef().getName())
            .collect(java.util.stream.Collectors.toSet());
    assertThat(
            rbac.stream()
                .filter(
                    o -> o instanceof ClusterRole && nodeRoles.contains(o.getMetadata().getName()))
                .flatMap(o -> ((ClusterRole) o).getRules().stream())
                .filter(
                    r ->
                        r.getApiGroups().equals(List.of(""))
                            && r.getResources().contains("persistentvolumes")))
        .as("a rule of a ClusterRole bound to the node plugin's account")
        .anySatisfy(r -> assertThat(r.getVerbs()).contains("get", "list", "watch"));
  }

  @Test
  void nodeRequestsAreAnsweredByTheNodeAndWrittenByTheControllerInTheOperandNamespace() {
    List<HasMetadata> rbac = desired(Fixtures.sample(), "1.34").rbac();
    assertThat(rbac)
        .filteredOn(o -> o instanceof Role && o.getMetadata().getName().contains("node-requests"))
        .extracting(
            o -> o.getMetadata().getName().replaceAll(".*node-requests-", ""),
            o ->
                ((Role) o)
                    .getRules().stream().map(r -> r.getResources() + " " + r.getVerbs()).toList())
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(
                "node",
                List.of("[noderequests] [get, list, watch]", "[noderequests/status] [patch]")),
            org.assertj.core.groups.Tuple.tuple(
                "controller", List.of("[noderequests] [get, list, create, patch, delete]")));
  }

  @Test
  void rbacIsLeastPrivilegePerComponent() {
    List<HasMetadata> rbac = desired(Fixtures.sample(), "1.34").rbac();
    ClusterRole resizer =
        rbac.stream()
            .filter(o -> o instanceof ClusterRole && o.getMetadata().getName().endsWith(":resizer"))
            .map(ClusterRole.class::cast)
            .findFirst()
            .orElseThrow();
    assertThat(resizer.getRules())
        .filteredOn(r -> r.getResources().contains("persistentvolumes"))
        .flatExtracting(r -> r.getVerbs())
        .containsExactly("get", "list", "watch", "patch");
    assertThat(resizer.getRules()).flatExtracting(r -> r.getVerbs()).doesNotContain("*");
    assertThat(rbac)
        .allSatisfy(
            o ->
                assertThat(o.getMetadata().getLabels()).containsEntry(Names.LABEL_CLUSTER, "fast"));
  }

  @Test
  void validatorExplainsCrossFieldProblems() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getStorageClasses().get(0).setPool("missing");
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly("storage class 'soko-nvme' names unknown pool 'missing'");
    assertThat(SpecValidator.problems(Fixtures.sample().getSpec())).isEmpty();
  }

  @Test
  void validatorRefusesTheResizersHttpPortAsMetricsPort() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setMetricsPort(9811);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .contains("driver.metricsPort must not be 9811");
  }
}

package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.util.List;
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
    assertThat(node.getPorts()).extracting("name").containsExactlyInAnyOrder("metrics", "healthz");
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
        .containsExactly("soko-driver", "csi-resizer");
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
    PodSpec pod = d.nodeDaemonSet().getSpec().getTemplate().getSpec();
    assertThat(pod.getContainers())
        .extracting(Container::getName)
        .doesNotContain("csi-snapshotter");
    assertThat(container(pod, "csi-provisioner").getArgs())
        .doesNotContain("--enable-capacity=true");
    assertThat(d.rbac())
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain("soko:fast:snapshotter", "fast-capacity");
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
    ClusterFacts noSnapshots = new ClusterFacts(v, Set.of(), true, null, null, null);
    DesiredState d = DesiredState.of(Fixtures.sample(), table, noSnapshots);
    assertThat(d.snapshotClass()).isNull();
    ClusterFacts served =
        new ClusterFacts(v, Set.of(ClusterFacts.VOLUME_SNAPSHOT_CLASSES), true, null, null, null);
    HasMetadata vsc = DesiredState.of(Fixtures.sample(), table, served).snapshotClass();
    assertThat(vsc.getMetadata().getName()).isEqualTo("fast-snapshots");
  }

  @Test
  void defaultStorageClassNeverStolen() {
    KubernetesVersion v = KubernetesVersion.parse("1.34");
    DesiredState mine = DesiredState.of(Fixtures.sample(), table, ClusterFacts.offline(v));
    assertThat(mine.storageClasses().get(0).getMetadata().getAnnotations())
        .containsEntry("storageclass.kubernetes.io/is-default-class", "true");
    DesiredState other =
        DesiredState.of(
            Fixtures.sample(), table, new ClusterFacts(v, Set.of(), false, "gp2", null, null));
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
                "controller", List.of("[noderequests] [get, create, patch]")));
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

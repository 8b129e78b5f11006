package dev.soko.operator.model;

import dev.soko.api.v1alpha1.ControllerSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * The controller: driver in controller mode and external-resizer, csi-group-snapshotter where group
 * snapshots run, plus livenessprobe with driver.registration Sidecars ({@link
 * KubeletRegistration}).
 */
final class ControllerDeployment {
  /**
   * The container of csi-snapshotter that serves volume group snapshots for the whole cluster. With
   * --node-deployment, external-snapshotter v8.7.0 reads VolumeGroupSnapshotContents and
   * VolumeGroupSnapshotClasses only through the label selector {@code
   * snapshot.storage.kubernetes.io/managed-by=<NODE_NAME>} (cmd/csi-snapshotter/main.go), so the
   * nodes' snapshotters cannot serve groups: one class cannot carry every node's name. This one
   * runs with a fixed identity instead, which the class and the group contents are labelled with.
   */
  static final String GROUP_SNAPSHOTTER = "csi-group-snapshotter";

  /**
   * The group snapshotter's NODE_NAME and so the managed-by label value of the group class and the
   * group contents it serves. No Kubernetes node can have it: '_' is legal in a label value, not in
   * a node name, so no node's snapshotter ever takes what is labelled with it.
   */
  static final String GROUP_SNAPSHOTTER_IDENTITY = "soko_groups";

  /**
   * Tells the controller-mode driver the group snapshotter's identity, which it labels the group
   * contents of its driver with (managed-by).
   */
  static final String GROUP_SNAPSHOTTER_ENV = "SOKO_GROUP_SNAPSHOTTER";

  /**
   * The group snapshotter's CSI timeout: the nodes' csi-snapshotters' (they pass none and get
   * v8.7.0's default of one minute, cmd/csi-snapshotter/main.go).
   */
  static final String GROUP_SNAPSHOTTER_TIMEOUT = "60s";

  private ControllerDeployment() {}

  /**
   * @param healthMonitor whether to run csi-external-health-monitor-controller (see {@link
   *     DesiredState#CONTROLLER_REPORTS_VOLUME_CONDITION})
   * @param groups whether to run csi-group-snapshotter ({@link DesiredState#groupSnapshotsEnabled})
   * @param dataPath whether the driver calls the nodes' data ports with the controller's
   *     certificate ({@link DataTls})
   * @param snapshotMetadata whether to run csi-snapshot-metadata ({@link SnapshotMetadata})
   */
  static Deployment build(
      Names n,
      StorageClusterSpec spec,
      ResolvedImages images,
      VersionsTable.Row row,
      boolean healthMonitor,
      boolean groups,
      boolean dataPath,
      boolean snapshotMetadata) {
    ControllerSpec ctrl =
        spec.getController() == null ? new ControllerSpec() : spec.getController();
    List<String> driverArgs = new ArrayList<>();
    driverArgs.add("--mode=controller");
    driverArgs.add("--endpoint=" + Containers.ENDPOINT);
    driverArgs.add("--node-id=$(NODE_NAME)");
    driverArgs.add("--driver-name=" + spec.getDriver().getName());
    driverArgs.add("--log-level=" + spec.getDriver().getLogLevel());
    driverArgs.addAll(KubeletRegistration.controllerDriverArgs(spec));
    if (dataPath) {
      driverArgs.addAll(DataTls.controllerArgs());
    }
    if (growthWaitsForKubelet(spec, images)) {
      driverArgs.add("--immediate-growth=false");
    }
    ContainerBuilder driver = new ContainerBuilder();
    Containers.metrics(spec, driverArgs, driver);
    if (spec.getDriver().getExtraArgs() != null) {
      driverArgs.addAll(spec.getDriver().getExtraArgs());
    }
    List<EnvVar> env = new ArrayList<>();
    env.add(Containers.fieldEnv("NODE_NAME", "spec.nodeName"));
    if (dataPath) {
      // The relay of SnapshotMetadata finds a snapshot's node by its StorageNode, named after the
      // StorageCluster, as the nodes' restores do.
      env.add(
          new EnvVarBuilder()
              .withName(NodeDaemonSet.STORAGE_CLUSTER_ENV)
              .withValue(n.cluster())
              .build());
    }
    if (DriverRelease.of(images).has(DriverRelease.NODE_REQUESTS)) {
      env.add(Containers.namespaceEnv());
    }
    if (groups) {
      env.add(
          new EnvVarBuilder()
              .withName(GROUP_SNAPSHOTTER_ENV)
              .withValue(GROUP_SNAPSHOTTER_IDENTITY)
              .build());
    }
    List<VolumeMount> driverMounts = new ArrayList<>(List.of(Containers.socketMount()));
    List<Volume> volumes = new ArrayList<>();
    volumes.add(
        new VolumeBuilder()
            .withName(Containers.SOCKET_VOLUME)
            .withNewEmptyDir()
            .endEmptyDir()
            .build());
    if (dataPath) {
      driverMounts.add(DataTls.mount());
      volumes.add(DataTls.volume(n, Names.CONTROLLER));
    }
    List<Container> containers = new ArrayList<>();
    containers.add(
        driver
            .withName(Component.DRIVER.key())
            .withImage(images.get(Component.DRIVER))
            .withImagePullPolicy(Containers.pullPolicy(spec))
            .withArgs(driverArgs)
            .withEnv(env)
            .withResources(Containers.resources(ctrl, Component.DRIVER, spec))
            .withVolumeMounts(driverMounts)
            .addToPorts(Containers.healthPort())
            .withLivenessProbe(Containers.driverLivenessProbe())
            .build());
    // --handle-volume-inuse-error=false: the driver expands online, so the resizer needs no Pod
    // informer (nor the RBAC for one) to wait for a volume to be unused.
    List<String> resizerArgs = leaderElected(n, Containers.RESIZER_HTTP_PORT, "--timeout=60s");
    resizerArgs.add("--handle-volume-inuse-error=false");
    resizerArgs.addAll(row.featureGateArgs(Component.RESIZER));
    containers.add(
        Containers.sidecar(Component.RESIZER, images, spec, ctrl)
            .withArgs(resizerArgs)
            .withPorts(Containers.httpEndpointPort(Containers.RESIZER_HTTP_PORT))
            .withLivenessProbe(Containers.leaderElectionLivenessProbe())
            .build());
    if (healthMonitor) {
      List<String> monitorArgs =
          leaderElected(n, Containers.HEALTH_MONITOR_HTTP_PORT, "--enable-node-watcher=false");
      monitorArgs.addAll(row.featureGateArgs(Component.HEALTH_MONITOR));
      containers.add(
          Containers.sidecar(Component.HEALTH_MONITOR, images, spec, ctrl)
              .withArgs(monitorArgs)
              .withPorts(Containers.httpEndpointPort(Containers.HEALTH_MONITOR_HTTP_PORT))
              .withLivenessProbe(Containers.leaderElectionLivenessProbe())
              .build());
    }
    if (groups) {
      containers.add(groupSnapshotter(spec, images, row, ctrl));
    }
    containers.addAll(KubeletRegistration.controllerSidecars(spec, images, ctrl));
    if (snapshotMetadata) {
      containers.add(SnapshotMetadata.sidecar(spec, images, ctrl));
      volumes.add(SnapshotMetadata.tlsVolume(n));
    }

    return new DeploymentBuilder()
        .withMetadata(Rbac.meta(n, n.workload(Names.CONTROLLER), n.namespace(), Names.CONTROLLER))
        .withNewSpec()
        .withReplicas(ctrl.getReplicas())
        .withNewSelector()
        .withMatchLabels(n.selector(Names.CONTROLLER))
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(n.labels(Names.CONTROLLER))
        .endMetadata()
        .withNewSpec()
        .withServiceAccountName(n.serviceAccount(Names.CONTROLLER))
        .withPriorityClassName(ctrl.getPriorityClassName())
        .withNodeSelector(ctrl.getNodeSelector())
        .withTolerations(ctrl.getTolerations())
        .withAffinity(ctrl.getAffinity())
        .withImagePullSecrets(Containers.pullSecrets(spec))
        .withContainers(containers)
        .withVolumes(volumes)
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  /**
   * csi-snapshotter for volume group snapshots ({@link #GROUP_SNAPSHOTTER}): --node-deployment with
   * the fixed NODE_NAME {@link #GROUP_SNAPSHOTTER_IDENTITY}, so that it serves exactly the group
   * class and the group contents labelled with it; never leader election (v8.7.0 exits when both
   * are set; with several replicas every pod's group snapshotter takes the same contents, the
   * driver's calls are idempotent by name and a status update that lost a conflict is retried); the
   * row's snapshotter gates with the group gate on; no --http-endpoint, which only leader
   * election's health check would need. The image is the row's csi-snapshotter (or its override);
   * its resources are spec.controller.resources' own key for it, not csi-snapshotter's (the
   * nodes').
   */
  private static Container groupSnapshotter(
      StorageClusterSpec spec, ResolvedImages images, VersionsTable.Row row, ControllerSpec ctrl) {
    List<String> args = new ArrayList<>();
    args.add("--csi-address=" + Containers.SOCKET);
    args.add("--node-deployment=true");
    args.addAll(row.groupSnapshotterGateArgs());
    args.add("--timeout=" + GROUP_SNAPSHOTTER_TIMEOUT);
    args.add("--v=2");
    return Containers.sidecar(Component.SNAPSHOTTER, images, spec, ctrl)
        .withName(GROUP_SNAPSHOTTER)
        .withResources(Containers.resources(ctrl, GROUP_SNAPSHOTTER))
        .withArgs(args)
        .withEnv(
            new EnvVarBuilder().withName("NODE_NAME").withValue(GROUP_SNAPSHOTTER_IDENTITY).build())
        .build();
  }

  /**
   * A leader-elected sidecar's flags, with --http-endpoint: that is where it serves {@code
   * /healthz/leader-election}, which fails when the leader can no longer renew its lease.
   */
  /**
   * Whether features.immediateGrowth is off, for a driver that knows the switch; an older one has
   * no flag for it and keeps its own path (through the node where it has NodeRequests).
   */
  private static boolean growthWaitsForKubelet(StorageClusterSpec spec, ResolvedImages images) {
    return Boolean.FALSE.equals(spec.getFeatures().getImmediateGrowth())
        && DriverRelease.of(images).has(DriverRelease.IMMEDIATE_GROWTH_SWITCH);
  }

  private static List<String> leaderElected(Names n, int httpPort, String... extra) {
    List<String> args = new ArrayList<>();
    args.add("--csi-address=" + Containers.SOCKET);
    args.add("--leader-election=true");
    args.add("--leader-election-namespace=" + n.namespace());
    // All interfaces of the pod: the kubelet probes the pod IP.
    args.add("--http-endpoint=:" + httpPort);
    args.add("--v=2");
    args.addAll(List.of(extra));
    return args;
  }
}

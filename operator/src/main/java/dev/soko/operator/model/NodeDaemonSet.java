package dev.soko.operator.model;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.NodePluginSpec;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The node plugin: the driver in node mode, with distributed provisioning (external-provisioner and
 * csi-snapshotter with --node-deployment), registering with the kubelet itself or through
 * node-driver-registrar and livenessprobe ({@link KubeletRegistration}).
 */
final class NodeDaemonSet {
  /**
   * Tells the driver its StorageCluster, which names and labels the node's StorageNode report (two
   * installations may share a node) and by which the operator selects its own reports.
   */
  static final String STORAGE_CLUSTER_ENV = "SOKO_STORAGE_CLUSTER";

  static final String CGROUP_VOLUME = "cgroup-fs";
  static final String CGROUP_FS = "/sys/fs/cgroup";

  /**
   * The container runtime's NRI socket directory (containerd 2.x's default), mounted at the same
   * path, so the driver's default --nri-socket finds the socket the runtime re-creates at each of
   * its starts. DirectoryOrCreate: a node whose runtime has no NRI keeps the plugin all the same.
   */
  static final String NRI_VOLUME = "nri-socket-dir";

  static final String NRI_DIR = "/var/run/nri";

  /**
   * The node's provisioner's API request rate and burst: one node takes every claim scheduled to
   * it, so its sidecar needs room for a whole StatefulSet's claims at once. API Priority and
   * Fairness, not this client-side limit, protects the API server; the sidecar waits only when it
   * is busy.
   */
  static final int PROVISIONER_API_QPS = 50;

  static final int PROVISIONER_API_BURST = 100;

  private NodeDaemonSet() {}

  /**
   * @param row the versions-table row the images come from: the feature gates its sidecars need
   * @param dataPath whether the driver serves the data port with the node's certificate ({@link
   *     DataTls})
   */
  static DaemonSet build(
      Names n,
      StorageClusterSpec spec,
      ResolvedImages images,
      VersionsTable.Row row,
      boolean snapshots,
      boolean dataPath) {
    NodePluginSpec node =
        spec.getNodePlugin() == null ? new NodePluginSpec() : spec.getNodePlugin();
    String kubeletDir = canonicalDir(node.getKubeletDir());
    String driverName = spec.getDriver().getName();
    String pluginDir = kubeletDir + "/plugins/" + driverName;
    String socketOnHost = pluginDir + "/csi.sock";

    boolean nodeRequests = DriverRelease.of(images).has(DriverRelease.NODE_REQUESTS);
    List<Container> containers = new ArrayList<>();
    containers.add(
        driver(n, spec, images, node, kubeletDir, socketOnHost, snapshots, nodeRequests, dataPath));
    containers.add(provisioner(spec, images, row, node, nodeRequests));
    if (snapshots) {
      containers.add(snapshotter(spec, images, row, node));
    }
    containers.addAll(KubeletRegistration.nodeSidecars(spec, images, node, socketOnHost));

    List<Volume> volumes = new ArrayList<>();
    volumes.add(hostPath(Containers.SOCKET_VOLUME, pluginDir, "DirectoryOrCreate"));
    volumes.add(
        hostPath(KubeletRegistration.VOLUME, kubeletDir + "/plugins_registry", "Directory"));
    volumes.add(hostPath("mountpoint-dir", kubeletDir + "/pods", "DirectoryOrCreate"));
    volumes.add(hostPath("plugins-dir", kubeletDir + "/plugins", "Directory"));
    volumes.add(hostPath("dev-dir", "/dev", "Directory"));
    if (nodeRequests) {
      volumes.add(hostPath(CGROUP_VOLUME, CGROUP_FS, "Directory"));
    }
    if (DriverRelease.of(images).has(DriverRelease.NRI)) {
      volumes.add(hostPath(NRI_VOLUME, NRI_DIR, "DirectoryOrCreate"));
    }
    if (dataPath) {
      volumes.add(DataTls.volume(n, Names.NODE));
    }
    for (PoolSpec pool : spec.getPools()) {
      // One pod template serves every node, so a pool with a node selector is mounted on the
      // nodes it does not select too: Directory would keep the whole plugin (and the other pools)
      // off the nodes that lack the directory, and no hostPath type mounts only what exists (an
      // unset type is created by the container runtime). The kubelet leaves an empty directory
      // there, which the driver never writes into; once the node is selected, the driver's
      // root-filesystem check refuses it unless a disk is mounted there.
      volumes.add(hostPath("pool-" + pool.getName(), pool.getPath(), "DirectoryOrCreate"));
    }

    return new DaemonSetBuilder()
        .withMetadata(Rbac.meta(n, n.workload(Names.NODE), n.namespace(), Names.NODE))
        .withNewSpec()
        .withNewSelector()
        .withMatchLabels(n.selector(Names.NODE))
        .endSelector()
        .withUpdateStrategy(node.getUpdateStrategy())
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(n.labels(Names.NODE))
        .endMetadata()
        .withNewSpec()
        .withServiceAccountName(n.serviceAccount(Names.NODE))
        .withPriorityClassName(node.getPriorityClassName())
        .withNodeSelector(node.getNodeSelector())
        .withTolerations(node.getTolerations())
        .withAffinity(node.getAffinity())
        .withImagePullSecrets(Containers.pullSecrets(spec))
        .withContainers(containers)
        .withVolumes(volumes)
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  private static Container driver(
      Names n,
      StorageClusterSpec spec,
      ResolvedImages images,
      NodePluginSpec node,
      String kubeletDir,
      String socketOnHost,
      boolean snapshots,
      boolean nodeRequests,
      boolean dataPath) {
    ContainerBuilder container = new ContainerBuilder();
    List<String> args = new ArrayList<>();
    args.add("--mode=node");
    args.add("--endpoint=" + Containers.ENDPOINT);
    args.add("--node-id=$(NODE_NAME)");
    args.add("--driver-name=" + spec.getDriver().getName());
    args.add("--log-level=" + spec.getDriver().getLogLevel());
    for (PoolSpec pool : spec.getPools()) {
      args.add("--pool=" + poolFlag(pool));
    }
    args.add("--allowed-path-root=" + kubeletDir);
    // Pools on the kubelet directory's filesystem (the node's root) are refused unless allowed.
    args.add("--kubelet-dir=" + kubeletDir);
    if (spec.getDriver().getMaxVolumesPerNode() != null) {
      args.add("--max-volumes-per-node=" + spec.getDriver().getMaxVolumesPerNode());
    }
    args.addAll(KubeletRegistration.nodeDriverArgs(spec, socketOnHost));
    if (snapshots) {
      // csi-snapshotter (--node-deployment) serves only the contents labelled with its node; the
      // node that holds an imported snapshot gives its content that label (docs/snapshots.md).
      args.add("--label-imported-snapshots=true");
    }
    if (dataPath) {
      args.addAll(DataTls.nodeArgs());
      container.addToPorts(DataTls.port());
    }
    Containers.metrics(spec, args, container);
    if (spec.getDriver().getExtraArgs() != null) {
      args.addAll(spec.getDriver().getExtraArgs());
    }
    List<VolumeMount> mounts = new ArrayList<>();
    mounts.add(Containers.socketMount());
    mounts.add(mount("mountpoint-dir", kubeletDir + "/pods", "Bidirectional"));
    mounts.add(mount("plugins-dir", kubeletDir + "/plugins", "Bidirectional"));
    mounts.add(mount("dev-dir", "/dev", null));
    if (nodeRequests) {
      // The host's cgroups, where the driver finds a pod's cgroup to apply its volumes' IO limits
      // (the container's own view shows only its own cgroup).
      mounts.add(mount(CGROUP_VOLUME, CGROUP_FS, null));
    }
    if (DriverRelease.of(images).has(DriverRelease.NRI)) {
      // The runtime's NRI socket, through which limits reach a container before it runs.
      mounts.add(mount(NRI_VOLUME, NRI_DIR, null));
    }
    for (PoolSpec pool : spec.getPools()) {
      mounts.add(mount("pool-" + pool.getName(), pool.getPath(), "Bidirectional"));
    }
    mounts.addAll(KubeletRegistration.nodeDriverMounts(spec));
    if (dataPath) {
      mounts.add(DataTls.mount());
    }
    List<EnvVar> env = new ArrayList<>();
    env.add(Containers.fieldEnv("NODE_NAME", "spec.nodeName"));
    env.add(new EnvVarBuilder().withName(STORAGE_CLUSTER_ENV).withValue(n.cluster()).build());
    if (nodeRequests) {
      env.add(Containers.namespaceEnv());
    }
    if (dataPath) {
      env.add(DataTls.podIpEnv());
    }
    return container
        .withName(Component.DRIVER.key())
        .withImage(images.get(Component.DRIVER))
        .withImagePullPolicy(Containers.pullPolicy(spec))
        .withArgs(args)
        .withEnv(env)
        .withResources(Containers.resources(node, Component.DRIVER, spec))
        .withNewSecurityContext()
        .withPrivileged(true)
        .endSecurityContext()
        .addToPorts(Containers.healthPort())
        .withLivenessProbe(Containers.driverLivenessProbe())
        .withReadinessProbe(KubeletRegistration.nodeDriverReadinessProbe(spec))
        .withVolumeMounts(mounts)
        .build();
  }

  /**
   * external-provisioner on every node (README "Deployment on each node"): --node-deployment with
   * NODE_NAME, strict topology and no immediate topology (the README's recommendation), its own
   * node's capacity published with the DaemonSet as owner (README "Capacity support": level 1 with
   * POD_NAME and NAMESPACE), and the row's feature gates (Topology).
   */
  private static Container provisioner(
      StorageClusterSpec spec,
      ResolvedImages images,
      VersionsTable.Row row,
      NodePluginSpec node,
      boolean apiRate) {
    List<String> args = new ArrayList<>();
    args.add("--csi-address=" + Containers.SOCKET);
    args.add("--node-deployment=true");
    args.add("--strict-topology=true");
    args.add("--immediate-topology=false");
    args.add("--extra-create-metadata=true");
    // Every claim costs the sidecar a PV create and its events (and on deletion a patch and a
    // delete); at client-go's defaults (5/s, burst 10) 300 claims on 3 nodes waited up to 10 s per
    // request and bound at 3.5 claims/s (docs/benchmarks.md, "Provisioning at scale").
    if (apiRate) {
      args.add("--kube-api-qps=" + PROVISIONER_API_QPS);
      args.add("--kube-api-burst=" + PROVISIONER_API_BURST);
    }
    args.addAll(row.featureGateArgs(Component.PROVISIONER));
    args.add("--v=2");
    boolean capacity = Boolean.TRUE.equals(spec.getFeatures().getCapacityTracking());
    if (capacity) {
      args.add("--enable-capacity=true");
      // Level 1: the CSIStorageCapacity objects are owned by the DaemonSet, not a single pod.
      args.add("--capacity-ownerref-level=1");
    }
    return Containers.sidecar(Component.PROVISIONER, images, spec, node)
        .withArgs(args)
        .withEnv(
            Containers.fieldEnv("NODE_NAME", "spec.nodeName"),
            Containers.fieldEnv("NAMESPACE", "metadata.namespace"),
            Containers.fieldEnv("POD_NAME", "metadata.name"))
        .build();
  }

  /**
   * csi-snapshotter on every node (external-snapshotter README "Distributed Snapshotting"):
   * --node-deployment with NODE_NAME, never leader election (v8.7.0 exits when both are set), and
   * the row's feature gates. The cluster's snapshot-controller must run with
   * --enable-distributed-snapshotting, or no snapshot content is ever handed to a node.
   */
  private static Container snapshotter(
      StorageClusterSpec spec, ResolvedImages images, VersionsTable.Row row, NodePluginSpec node) {
    List<String> args = new ArrayList<>();
    args.add("--csi-address=" + Containers.SOCKET);
    args.add("--node-deployment=true");
    args.addAll(row.featureGateArgs(Component.SNAPSHOTTER));
    args.add("--v=2");
    return Containers.sidecar(Component.SNAPSHOTTER, images, spec, node)
        .withArgs(args)
        .withEnv(Containers.fieldEnv("NODE_NAME", "spec.nodeName"))
        .build();
  }

  /**
   * The driver's --pool value, of the fields driver-cli's PoolField lists (DriverArgumentsTest
   * parses every one with the driver's parser); defaults are left out. A pool whose backend does
   * not format its volumes (BtrfsSubvolume) gets no fs field: its filesystem follows from the
   * backend. One nodeSelector field per label, sorted by key so that the pod template (and so its
   * hash) does not depend on the order of the spec's map: label keys and values hold neither ','
   * nor ':', and the first '=' ends the key.
   */
  static String poolFlag(PoolSpec pool) {
    StringBuilder sb = new StringBuilder();
    sb.append("name=").append(pool.getName()).append(",path=").append(pool.getPath());
    PoolBackend backend = PoolBackends.of(pool);
    if (PoolBackends.driverName(backend) != null) {
      sb.append(",backend=").append(PoolBackends.driverName(backend));
    }
    if (pool.getCapacity() != null) {
      sb.append(",capacity=").append(pool.getCapacity());
    }
    if (pool.getOverprovisionRatio() != null && pool.getOverprovisionRatio() != 1.0) {
      sb.append(",overprovision=").append(pool.getOverprovisionRatio());
    }
    if (PoolBackends.facts(backend).formatsVolumes()
        && pool.getFsTypes() != null
        && !pool.getFsTypes().isEmpty()) {
      sb.append(",fs=")
          .append(pool.getFsTypes().stream().map(FsType::name).collect(Collectors.joining(":")));
    }
    if (Boolean.TRUE.equals(pool.getRequireMountPoint())) {
      sb.append(",requireMountPoint=true");
    }
    if (Boolean.TRUE.equals(pool.getAllowRootFilesystem())) {
      sb.append(",allowRootFilesystem=true");
    }
    if (pool.getNodeSelector() != null) {
      new TreeMap<>(pool.getNodeSelector())
          .forEach((k, v) -> sb.append(",nodeSelector:").append(k).append('=').append(v));
    }
    return sb.toString();
  }

  private static VolumeMount mount(String name, String path, String propagation) {
    return new VolumeMountBuilder()
        .withName(name)
        .withMountPath(path)
        .withMountPropagation(propagation)
        .build();
  }

  private static Volume hostPath(String name, String path, String type) {
    return new VolumeBuilder()
        .withName(name)
        .withNewHostPath()
        .withPath(path)
        .withType(type)
        .endHostPath()
        .build();
  }

  /**
   * The kubelet directory without '//', '.' segments or a trailing '/': the kubelet and the
   * driver's --kubelet-registration-path take the socket path as written, and the driver refuses
   * one that is not in this canonical form. (The CRD already refuses '..'.)
   */
  static String canonicalDir(String dir) {
    String d = dir == null ? NodePluginSpec.DEFAULT_KUBELET_DIR : dir;
    String joined =
        Arrays.stream(d.split("/"))
            .filter(s -> !s.isEmpty() && !s.equals("."))
            .collect(Collectors.joining("/"));
    return "/" + joined;
  }
}

package dev.soko.operator.harness;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * "The node" of a {@link ControlPlane} without a kubelet or container runtime: the Node, the node
 * plugin Pod and the CSINode objects that a kubelet and node-driver-registrar would write, and the
 * containers of the operator's DaemonSet and controller Deployment run as local processes (the
 * driver in node and controller mode, the real csi-provisioner, csi-snapshotter and csi-resizer),
 * with the args the operator applied and each under the ServiceAccount the operator made.
 */
public final class PlayedNode implements AutoCloseable {
  /** The topology key the driver reports in NodeGetInfo. */
  public static final String TOPOLOGY_KEY = "topology.soko.dev/node";

  private static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(120);

  private final ControlPlane plane;
  private final String name;
  private final Path dir;
  private final Deque<Process> processes = new ArrayDeque<>();
  private List<String> driverArgs = List.of();

  /**
   * @param dir a fresh directory for the node's sockets, kubelet directory and logs
   */
  public PlayedNode(ControlPlane plane, String name, Path dir) {
    this.plane = plane;
    this.name = name;
    this.dir = dir;
  }

  /** Writes the Node object, labelled as a kubelet labels it, with the driver's topology. */
  public PlayedNode register() {
    plane
        .admin()
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(
                    Map.of(
                        "kubernetes.io/hostname",
                        name,
                        "kubernetes.io/os",
                        "linux",
                        TOPOLOGY_KEY,
                        name))
                .endMetadata()
                .build())
        .serverSideApply();
    return this;
  }

  /**
   * Plays the node plugin and the controller pod of the StorageCluster's DaemonSet and Deployment
   * (named {@code <cluster>-node} and {@code <cluster>-controller} in {@code namespace}).
   */
  public void startDriver(String cluster, String namespace, String driverName) throws Exception {
    KubernetesClient admin = plane.admin();
    DaemonSet ds =
        admin.apps().daemonSets().inNamespace(namespace).withName(cluster + "-node").get();
    Deployment dep =
        admin.apps().deployments().inNamespace(namespace).withName(cluster + "-controller").get();
    if (ds == null || dep == null) {
      throw new IllegalStateException("the operator applied no DaemonSet or Deployment yet");
    }
    PodSpec nodePod = ds.getSpec().getTemplate().getSpec();
    PodSpec controllerPod = dep.getSpec().getTemplate().getSpec();
    String pod = writePluginPod(ds, namespace);
    writeCsiNode(driverName);

    Path nodeSocket = dir.resolve("csi-node/csi.sock");
    Path controllerSocket = dir.resolve("csi-controller/csi.sock");
    Files.createDirectories(nodeSocket.getParent());
    Files.createDirectories(controllerSocket.getParent());
    Files.createDirectories(dir.resolve("kubelet/plugins"));
    Path nodeKubeconfig = serviceAccountKubeconfig(namespace, nodePod.getServiceAccountName());
    Path controllerKubeconfig =
        serviceAccountKubeconfig(namespace, controllerPod.getServiceAccountName());

    driverArgs = localArgs(nodePod, container(nodePod, "soko-driver"), nodeSocket, namespace);
    Path driver = OperatorProcess.repositoryRoot().resolve("driver/bin/soko-driver");
    if (!Files.isRegularFile(driver.resolveSibling("../target/soko-driver.jar").normalize())) {
      throw new IllegalStateException(
          "the driver jar is missing: run `mvn -pl driver -am package`");
    }
    Process nodeDriver = spawn("driver-node", driver, driverArgs, Map.of());
    Process controllerDriver =
        spawn(
            "driver-controller",
            driver,
            localArgs(
                controllerPod,
                container(controllerPod, "soko-driver"),
                controllerSocket,
                namespace),
            Map.of());
    awaitSocket(nodeSocket, nodeDriver, "driver-node");
    awaitSocket(controllerSocket, controllerDriver, "driver-controller");

    Path bin = OperatorInstall.toolCache().resolve("bin");
    spawn(
        "csi-provisioner",
        bin.resolve("csi-provisioner"),
        withKubeconfig(
            localArgs(container(nodePod, "csi-provisioner"), nodeSocket), nodeKubeconfig),
        Map.of("NODE_NAME", name, "NAMESPACE", namespace, "POD_NAME", pod));
    if (findContainer(nodePod, "csi-snapshotter") != null) {
      spawn(
          "csi-snapshotter",
          bin.resolve("csi-snapshotter"),
          withKubeconfig(
              localArgs(container(nodePod, "csi-snapshotter"), nodeSocket), nodeKubeconfig),
          Map.of("NODE_NAME", name));
    }
    spawn(
        "csi-resizer",
        bin.resolve("csi-resizer"),
        withKubeconfig(
            localArgs(container(controllerPod, "csi-resizer"), controllerSocket),
            controllerKubeconfig),
        Map.of("NODE_NAME", name));
  }

  /** The node plugin's driver args as this node runs them. */
  public List<String> driverArgs() {
    return driverArgs;
  }

  /** The node's kubelet directory, whose filesystem plays the node's root filesystem. */
  public Path kubeletDir() {
    return dir.resolve("kubelet");
  }

  public Path log(String process) {
    return dir.resolve("logs").resolve(process + ".log");
  }

  /**
   * What a kubelet does for pods being deleted: confirms their end (the node plugin's placeholder
   * Pod holds its namespace's deletion otherwise).
   */
  public void confirmPodsDeleted(String namespace) {
    plane.admin().pods().inNamespace(namespace).withGracePeriod(0).delete();
  }

  /**
   * What a kubelet does once the workloads are deleted: stops their containers (here the played
   * drivers and sidecars), then confirms their pods' end.
   */
  public void endPods(String namespace) throws InterruptedException {
    close();
    confirmPodsDeleted(namespace);
  }

  /**
   * The node plugin Pod the DaemonSet would have: the provisioner makes it (through its DaemonSet)
   * the owner of the CSIStorageCapacity objects it publishes.
   */
  private String writePluginPod(DaemonSet ds, String namespace) {
    String pod = ds.getMetadata().getName() + "-played";
    plane
        .admin()
        .pods()
        .inNamespace(namespace)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(pod)
                .withNamespace(namespace)
                .withLabels(ds.getSpec().getTemplate().getMetadata().getLabels())
                .addNewOwnerReference()
                .withApiVersion("apps/v1")
                .withKind("DaemonSet")
                .withName(ds.getMetadata().getName())
                .withUid(ds.getMetadata().getUid())
                .withController(true)
                .endOwnerReference()
                .endMetadata()
                .withNewSpec()
                .withNodeName(name)
                .withServiceAccountName(
                    ds.getSpec().getTemplate().getSpec().getServiceAccountName())
                .addNewContainer()
                .withName("placeholder")
                .withImage("none.invalid/no-kubelet-here")
                .endContainer()
                .endSpec()
                .build())
        .serverSideApply();
    return pod;
  }

  /** What node-driver-registrar and the kubelet would register from the driver's NodeGetInfo. */
  private void writeCsiNode(String driverName) {
    plane
        .admin()
        .storage()
        .v1()
        .csiNodes()
        .resource(
            new CSINodeBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .addNewDriver()
                .withName(driverName)
                .withNodeID(name)
                .withTopologyKeys(TOPOLOGY_KEY)
                .endDriver()
                .endSpec()
                .build())
        .serverSideApply();
  }

  /** A kubeconfig with a fresh token of the ServiceAccount, so a process has exactly its RBAC. */
  private Path serviceAccountKubeconfig(String namespace, String serviceAccount)
      throws IOException {
    String token =
        plane
            .admin()
            .serviceAccounts()
            .inNamespace(namespace)
            .withName(serviceAccount)
            .tokenRequest(
                new TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(7200L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
    return plane.tokenKubeconfig("sa-" + namespace + "-" + serviceAccount, token);
  }

  /**
   * A container's args rewritten for a local process: the pod's socket path becomes a local one,
   * the downward-API node name is substituted, the kubelet directory becomes the node's, the
   * driver's health endpoint (built-in registration) and a sidecar's --http-endpoint move to a free
   * loopback port (the processes share this host's network), and the registration directory to one
   * no kubelet watches.
   */
  private List<String> localArgs(Container container, Path socket) throws IOException {
    return localArgs(null, container, socket, null);
  }

  /**
   * The container's arguments for a local process: sockets and ports of this machine, and the
   * Secrets the pod mounts (the data path's certificates) written into this node's folder from the
   * API server, as the kubelet would have mounted them.
   */
  private List<String> localArgs(PodSpec pod, Container container, Path socket, String namespace)
      throws IOException {
    List<String> args = new ArrayList<>();
    for (String arg : container.getArgs()) {
      String local =
          arg.replace("unix:///csi/csi.sock", "unix://" + socket)
              .replace("/csi/csi.sock", socket.toString())
              .replace("$(NODE_NAME)", name);
      String flag = local.contains("=") ? local.substring(0, local.indexOf('=')) : local;
      switch (flag) {
        case "--health-address" -> local = flag + "=127.0.0.1:" + ControlPlane.freePort();
        case "--http-endpoint" -> local = flag + "=127.0.0.1:" + ControlPlane.freePort();
        case "--kubelet-dir" -> local = flag + "=" + kubeletDir();
        case "--data-address" -> local = flag + "=127.0.0.1:" + ControlPlane.freePort();
        case "--data-tls-dir" ->
            local =
                flag
                    + "="
                    + mountedSecret(pod, container, local.substring(flag.length() + 1), namespace);
        case "--registration-dir" -> {
          Path registration = Files.createDirectories(dir.resolve("registration"));
          local = flag + "=" + registration;
        }
        default -> {}
      }
      args.add(local);
    }
    return args;
  }

  /** Writes the Secret {@code container} mounts at {@code mountPath} into a local folder. */
  private Path mountedSecret(PodSpec pod, Container container, String mountPath, String namespace)
      throws IOException {
    String volume =
        container.getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals(mountPath))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("nothing is mounted at " + mountPath))
            .getName();
    String secretName =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals(volume) && v.getSecret() != null)
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("volume " + volume + " is no Secret"))
            .getSecret()
            .getSecretName();
    io.fabric8.kubernetes.api.model.Secret secret =
        Await.until(
            "Secret " + secretName,
            Duration.ofSeconds(60),
            Duration.ofMillis(200),
            () -> plane.admin().secrets().inNamespace(namespace).withName(secretName).get(),
            found -> found != null && found.getData() != null && !found.getData().isEmpty());
    Path local = Files.createDirectories(dir.resolve("secrets").resolve(secretName));
    for (Map.Entry<String, String> entry : secret.getData().entrySet()) {
      Files.write(
          local.resolve(entry.getKey()), java.util.Base64.getDecoder().decode(entry.getValue()));
    }
    return local;
  }

  private static List<String> withKubeconfig(List<String> args, Path kubeconfig) {
    List<String> all = new ArrayList<>(args);
    all.add("--kubeconfig=" + kubeconfig);
    return all;
  }

  private static Container container(PodSpec pod, String name) {
    Container c = findContainer(pod, name);
    if (c == null) {
      throw new IllegalStateException("the pod template has no container " + name);
    }
    return c;
  }

  private static Container findContainer(PodSpec pod, String name) {
    return pod.getContainers().stream()
        .filter(c -> name.equals(c.getName()))
        .findFirst()
        .orElse(null);
  }

  private Process spawn(String process, Path executable, List<String> args, Map<String, String> env)
      throws IOException {
    Files.createDirectories(dir.resolve("logs"));
    List<String> cmd = new ArrayList<>();
    cmd.add(executable.toString());
    cmd.addAll(args);
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log(process).toFile()));
    pb.environment().putAll(env);
    pb.environment().remove("KUBECONFIG");
    Process p = pb.start();
    Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly, process + "-stop"));
    processes.push(p);
    return p;
  }

  private void awaitSocket(Path socket, Process p, String process) throws InterruptedException {
    long deadline = System.nanoTime() + SOCKET_TIMEOUT.toNanos();
    while (!Files.exists(socket)) {
      if (!p.isAlive()) {
        throw new IllegalStateException(process + " exited; see " + log(process));
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            process
                + " did not listen on "
                + socket
                + " within "
                + SOCKET_TIMEOUT.toSeconds()
                + " s");
      }
      Thread.sleep(100);
    }
  }

  /** Stops the processes newest first: the sidecars go while the drivers still answer. */
  @Override
  public void close() throws InterruptedException {
    while (!processes.isEmpty()) {
      Process p = processes.pop();
      p.destroy();
      if (!p.waitFor(15, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}

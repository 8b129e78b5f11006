package dev.soko.e2e;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import dev.soko.operator.harness.OperatorInstall;
import dev.soko.operator.harness.PlayedCluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * {@code make demo-control-plane}: the operator on a real control plane without a kubelet, and "the
 * node" played by the driver and the real CSI sidecars as processes ({@link PlayedCluster}); then
 * one StorageCluster and a volume's life through Kubernetes objects: install, provision, expand,
 * snapshot, restore, delete, uninstall. Prints each step, its duration and the objects it made as
 * {@code kubectl get} shows them. The same flow with assertions is {@link ControlPlaneE2E}.
 */
public final class ControlPlaneDemo {
  private static final PlayedCluster.Names NAMES = PlayedCluster.Names.of("demo");
  private static final Duration TIMEOUT = Duration.ofSeconds(120);

  private final Path kubectl = OperatorInstall.toolCache().resolve("bin/kubectl");
  private long stepStarted;
  private PlayedCluster cluster;
  private KubernetesClient client;
  private Workloads apps;

  public static void main(String[] args) throws Exception {
    Path logs = Path.of("target", "demo-control-plane-logs").toAbsolutePath();
    ControlPlaneDemo demo = new ControlPlaneDemo();
    demo.step(
        "start etcd, kube-apiserver (RBAC), kube-controller-manager, snapshot-controller and the"
            + " operator");
    try (PlayedCluster cluster = PlayedCluster.start(NAMES, logs)) {
      demo.run(cluster);
    } finally {
      System.out.println("    (the logs of every process are in " + logs + ")");
    }
    System.out.printf("%n\033[1m==> demo complete\033[0m%n");
  }

  private void run(PlayedCluster started) throws Exception {
    cluster = started;
    client = cluster.admin();
    apps = Workloads.withoutPods(client, NAMES.apps());
    doneIn();
    show("get", "nodes");
    install();
    playTheNode();
    String pv = provision();
    expand(pv);
    snapshotAndRestore();
    deleteVolumes();
    uninstall();
  }

  private void install() throws IOException, InterruptedException {
    step("apply a StorageCluster: one pool of 2 GiB, one StorageClass, snapshots on");
    String yaml = cluster.storageClusterYaml();
    System.out.print(yaml.indent(4));
    client.resource(Serialization.unmarshal(yaml, StorageCluster.class)).create();
    awaitTrue(
        "the operator to apply every object (status.observedGeneration 1)",
        () -> Long.valueOf(1).equals(storageCluster().getStatus().getObservedGeneration()));
    doneIn();
    show("get", "storagecluster");
    show("get", "csidriver,storageclass,volumesnapshotclass");
    show("-n", NAMES.namespace(), "get", "daemonset,deployment,serviceaccount");
    show(
        "get",
        "storagecluster",
        NAMES.cluster(),
        "-o",
        "jsonpath={range .status.conditions[*]}{\"    \"}{.type}={.status} ({.reason}):"
            + " {.message}{\"\\n\"}{end}");
  }

  private void playTheNode() throws Exception {
    step(
        "play the node: the driver (node and controller mode) and the provisioner, snapshotter"
            + " and resizer with the args the operator applied");
    cluster.node().startDriver(NAMES.cluster(), NAMES.namespace(), NAMES.driver());
    awaitTrue(
        "CSIStorageCapacity from the provisioner",
        () ->
            !client
                .storage()
                .v1()
                .csiStorageCapacities()
                .inNamespace(NAMES.namespace())
                .list()
                .getItems()
                .isEmpty());
    doneIn();
    System.out.println("    driver: soko-driver " + String.join(" ", cluster.node().driverArgs()));
    show("get", "csinode");
    show(
        "-n",
        NAMES.namespace(),
        "get",
        "csistoragecapacity",
        "-o",
        "custom-columns=CLASS:.storageClassName,CAPACITY:.capacity,MAX-VOLUME:.maximumVolumeSize,"
            + "NODE:.nodeTopology.matchLabels");
  }

  private String provision() throws IOException, InterruptedException {
    step(
        "a PVC of 64Mi on the node (with the annotation the scheduler sets for"
            + " WaitForFirstConsumer)");
    apps.createNamespace();
    apps.create(
        Workloads.onNode(apps.claim("data", NAMES.storageClass(), "64Mi", false), NAMES.node()));
    String pv = apps.awaitBound("data", TIMEOUT).getSpec().getVolumeName();
    doneIn();
    show("-n", NAMES.apps(), "get", "pvc");
    show("get", "pv", pv);
    listAllocated("images");
    return pv;
  }

  private void expand(String pv) throws IOException, InterruptedException {
    step("expand the PVC to 128Mi: the resizer calls ControllerExpandVolume, the PV grows");
    apps.resize("data", "128Mi");
    awaitTrue("PV capacity 128Mi", () -> "128Mi".equals(apps.volumeCapacity(pv)));
    doneIn();
    show("get", "pv", pv);
    show(
        "-n",
        NAMES.apps(),
        "get",
        "pvc",
        "data",
        "-o",
        "jsonpath={range .status.conditions[*]}{\"    \"}{.type}: {.message}{\"\\n\"}{end}");
    System.out.println(
        "    (the filesystem grows in NodeExpandVolume when a kubelet mounts the volume; no"
            + " kubelet here)");
  }

  private void snapshotAndRestore() throws IOException, InterruptedException {
    step("snapshot the PVC");
    var snapshot = apps.snapshot("snap", "data", NAMES.snapshotClass(), TIMEOUT);
    doneIn();
    show("-n", NAMES.apps(), "get", "volumesnapshot");
    listAllocated("snapshots");

    step("restore the snapshot into a new PVC");
    String size = Workloads.field(snapshot, "status", "restoreSize").toString();
    apps.create(
        Workloads.onNode(
            apps.restoredClaim("restored", NAMES.storageClass(), size, "snap"), NAMES.node()));
    apps.awaitBound("restored", TIMEOUT);
    doneIn();
    show("-n", NAMES.apps(), "get", "pvc");
    show("get", "storagecluster");
  }

  private void deleteVolumes() throws IOException, InterruptedException {
    step("delete the snapshot and both PVCs: the driver removes their images");
    apps.deleteSnapshots();
    client.persistentVolumeClaims().inNamespace(NAMES.apps()).delete();
    awaitTrue("no PV left", () -> client.persistentVolumes().list().getItems().isEmpty());
    awaitTrue(
        "no image left in the pool",
        () -> cluster.poolImages("images").size() + cluster.poolImages("snapshots").size() == 0);
    doneIn();
    show("get", "pv,volumesnapshotcontent");
    System.out.printf(
        "    pool images: %d, snapshots: %d%n",
        cluster.poolImages("images").size(), cluster.poolImages("snapshots").size());
  }

  private void uninstall() throws IOException, InterruptedException {
    step("delete the StorageCluster: the operator uninstalls everything it created");
    client.resources(StorageCluster.class).withName(NAMES.cluster()).delete();
    // The operator deletes the RBAC and the rest once the workloads' pods have ended.
    awaitTrue(
        "StorageCluster gone (its pods' end confirmed as a kubelet would)",
        () -> {
          cluster.node().confirmPodsDeleted(NAMES.namespace());
          return storageCluster() == null;
        });
    awaitTrue(
        "namespace " + NAMES.namespace() + " gone (its pods' end confirmed as a kubelet would)",
        () -> {
          cluster.node().confirmPodsDeleted(NAMES.namespace());
          return client.namespaces().withName(NAMES.namespace()).get() == null;
        });
    doneIn();
    show("get", "storagecluster,csidriver,storageclass,volumesnapshotclass");
  }

  private StorageCluster storageCluster() {
    return client.resources(StorageCluster.class).withName(NAMES.cluster()).get();
  }

  private static void awaitTrue(String what, BooleanSupplier condition) {
    Await.until(what, TIMEOUT, condition::getAsBoolean, Boolean::booleanValue);
  }

  private void step(String title) {
    stepStarted = System.nanoTime();
    System.out.printf("%n\033[1m==> %s\033[0m%n", title);
  }

  private void doneIn() {
    System.out.printf("    (%d ms)%n", (System.nanoTime() - stepStarted) / 1_000_000);
  }

  /** Prints {@code kubectl ARGS} as typed and its output indented, as a reader would see it. */
  private void show(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig"));
    command.add(cluster.plane().kubeconfig("admin").toString());
    command.addAll(List.of(args));
    System.out.println("    $ kubectl " + String.join(" ", args));
    System.out.print(output(command).indent(6));
  }

  /** The pool directory's files: allocated KiB beside the size (the images are sparse). */
  private void listAllocated(String dir) throws IOException, InterruptedException {
    System.out.println("    pool " + dir + ":");
    System.out.print(
        output(
            List.of(
                "find",
                cluster.poolDir().resolve(dir).toString(),
                "-mindepth",
                "1",
                "-maxdepth",
                "1",
                "-printf",
                "      %k KiB allocated, %s bytes  %f\\n")));
  }

  /** What a command prints, errors included, whatever its exit code: the demo shows it as is. */
  private static String output(List<String> command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    process.waitFor();
    return out;
  }
}

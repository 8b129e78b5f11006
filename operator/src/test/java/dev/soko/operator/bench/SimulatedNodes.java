package dev.soko.operator.bench;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.api.v1alpha1.StorageNodePool;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Plays kubelet, scheduler and the CSI node plugin for simulated Nodes, without any of them: it
 * creates the Node objects, binds the node-plugin Pods that the real DaemonSet controller creates
 * to their node, marks them ready, and writes what node-driver-registrar and the
 * external-provisioner would: a CSINode listing the driver and a CSIStorageCapacity per pool and
 * node. Requests run concurrently on a bounded pool.
 */
final class SimulatedNodes implements AutoCloseable {
  static final String TOPOLOGY_KEY = "topology.soko.dev/node";
  static final String DRIVER_LABEL = "csi.storage.k8s.io/drivername";

  private final KubernetesClient admin;
  private final String namespace;
  private final String driver;
  private final String storageClass;
  private final ExecutorService pool = Executors.newFixedThreadPool(24);
  private int count;

  SimulatedNodes(KubernetesClient admin, String namespace, String driver, String storageClass) {
    this.admin = admin;
    this.namespace = namespace;
    this.driver = driver;
    this.storageClass = storageClass;
  }

  static String name(int i) {
    return String.format("sim-%04d", i);
  }

  /** Adds Node objects until there are n. */
  void growTo(int n) throws Exception {
    List<Runnable> work = new ArrayList<>();
    for (int i = count; i < n; i++) {
      String node = name(i);
      work.add(() -> createReadyNode(node));
    }
    run(work);
    count = n;
  }

  /**
   * A Node as a kubelet registers it: admission taints a new Node not-ready, and the kubelet's
   * first Ready status lets the node lifecycle controller lift the taint; neither runs here, so the
   * status is written and the taint lifted in their place.
   */
  private void createReadyNode(String node) {
    admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(node)
                .addToLabels("kubernetes.io/hostname", node)
                .addToLabels("kubernetes.io/os", "linux")
                .addToLabels(TOPOLOGY_KEY, node)
                .endMetadata()
                .build())
        .create();
    admin
        .nodes()
        .withName(node)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\": {\"taints\": null}}");
    admin
        .nodes()
        .withName(node)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            """
            {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
              "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
              "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
            """);
  }

  /**
   * Binds every unbound node-plugin Pod to the node its DaemonSet affinity names, marks bound Pods
   * ready, and writes the CSINode and CSIStorageCapacity of every node; returns when n Pods are
   * ready or fails after the timeout.
   */
  void settle(int n, long timeoutSeconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    while (true) {
      List<Pod> pods = admin.pods().inNamespace(namespace).list().getItems();
      List<Runnable> work = new ArrayList<>();
      int ready = 0;
      for (Pod pod : pods) {
        String podName = pod.getMetadata().getName();
        if (pod.getSpec().getNodeName() == null) {
          String node = targetNode(pod);
          if (node != null) {
            work.add(() -> bind(podName, node));
          }
        } else if (!isReady(pod)) {
          work.add(() -> setReady(podName, true));
        } else {
          ready++;
        }
      }
      run(work);
      if (ready >= n) {
        break;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            ready + " of " + n + " node-plugin pods ready after " + timeoutSeconds + " s");
      }
      Thread.sleep(500);
    }
    List<Runnable> work = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String node = name(i);
      work.add(() -> registerDriver(node, true));
      work.add(() -> publishCapacity(node, "10Gi", true));
    }
    run(work);
  }

  /** Writes the node's CSINode with or without the driver (kubelet re-registering or not). */
  void registerDriver(String node, boolean listed) {
    var b = new CSINodeBuilder().withNewMetadata().withName(node).endMetadata().withNewSpec();
    if (listed) {
      b.addNewDriver().withName(driver).withNodeID(node).withTopologyKeys(TOPOLOGY_KEY).endDriver();
    }
    var csiNode = b.endSpec().build();
    if (csiNode.getSpec().getDrivers() == null) {
      csiNode.getSpec().setDrivers(new ArrayList<>());
    }
    admin.resource(csiNode).fieldManager("bench-kubelet").forceConflicts().serverSideApply();
  }

  /** Writes the node's CSIStorageCapacity of pool "main", as the external-provisioner would. */
  void publishCapacity(String node, String available, boolean create) {
    var capacity =
        new CSIStorageCapacityBuilder()
            .withNewMetadata()
            .withName("cap-" + node + "-main")
            .withNamespace(namespace)
            .addToLabels(DRIVER_LABEL, driver)
            .endMetadata()
            .withStorageClassName(storageClass)
            .withNodeTopology(
                new LabelSelectorBuilder().addToMatchLabels(TOPOLOGY_KEY, node).build())
            .withCapacity(new Quantity(available))
            .build();
    admin.resource(capacity).fieldManager("bench-provisioner").forceConflicts().serverSideApply();
  }

  /**
   * Applies the node's StorageNode report of pool "main" as its driver does (server-side apply as
   * soko-driver), fresh now: Ready with {@code usedBytes} used, or Refused.
   */
  void report(String cluster, String node, boolean ready, long usedBytes) {
    long size = 10L << 30;
    StorageNodePool pool =
        ready
            ? new StorageNodePool("main", StorageNodePool.READY, null, size, usedBytes, 0L, size, 0)
            : new StorageNodePool(
                "main",
                StorageNodePool.REFUSED,
                "pool path /var/lib/soko/main is not a mount point",
                null,
                null,
                null,
                null,
                null);
    StorageNode r = new StorageNode();
    r.setMetadata(
        new ObjectMetaBuilder()
            .withName(cluster + "." + node)
            .addToLabels(StorageNode.LABEL_CLUSTER, cluster)
            .addToLabels(StorageNode.LABEL_NODE, node)
            .build());
    r.setNode(node);
    r.setObservedTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    r.setDriverVersion("bench");
    r.setPools(List.of(pool));
    r.setReady(ready ? 1 : 0);
    r.setRefused(ready ? 0 : 1);
    r.setVolumes(0);
    admin.resource(r).fieldManager("soko-driver").forceConflicts().serverSideApply();
  }

  /** Every node's report at once (the drivers' 60 s refresh, all in one burst), used bytes new. */
  void reportAll(String cluster, int n, long usedBytes) throws Exception {
    List<Runnable> work = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String node = name(i);
      work.add(() -> report(cluster, node, true, usedBytes));
    }
    run(work);
  }

  void deleteReports(String cluster) {
    admin.resources(StorageNode.class).withLabel(StorageNode.LABEL_CLUSTER, cluster).delete();
  }

  /** The node-plugin Pod of a node, as the DaemonSet controller named it. */
  String podOf(String node) {
    return admin.pods().inNamespace(namespace).list().getItems().stream()
        .filter(p -> node.equals(p.getSpec().getNodeName()))
        .map(p -> p.getMetadata().getName())
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no node-plugin pod on " + node));
  }

  /** Sets the Pod's Ready condition, as the kubelet would after its readiness probe. */
  void setReady(String pod, boolean ready) {
    String status = ready ? "True" : "False";
    String patch =
        """
        {"status": {"phase": "Running", "conditions": [
          {"type": "PodScheduled", "status": "True"},
          {"type": "Initialized", "status": "True"},
          {"type": "ContainersReady", "status": "%s"},
          {"type": "Ready", "status": "%s"}]}}
        """
            .formatted(status, status);
    admin
        .pods()
        .inNamespace(namespace)
        .withName(pod)
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
  }

  private void bind(String pod, String node) {
    admin
        .bindings()
        .inNamespace(namespace)
        .resource(
            new BindingBuilder()
                .withNewMetadata()
                .withName(pod)
                .endMetadata()
                .withNewTarget()
                .withApiVersion("v1")
                .withKind("Node")
                .withName(node)
                .endTarget()
                .build())
        .create();
  }

  private static boolean isReady(Pod pod) {
    return pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** The node of the DaemonSet controller's required node affinity (metadata.name In [node]). */
  private static String targetNode(Pod pod) {
    var affinity = pod.getSpec().getAffinity();
    if (affinity == null || affinity.getNodeAffinity() == null) {
      return null;
    }
    var required = affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
    if (required == null) {
      return null;
    }
    for (var term : required.getNodeSelectorTerms()) {
      if (term.getMatchFields() == null) {
        continue;
      }
      for (var field : term.getMatchFields()) {
        if ("metadata.name".equals(field.getKey()) && field.getValues().size() == 1) {
          return field.getValues().get(0);
        }
      }
    }
    return null;
  }

  private void run(List<Runnable> work) throws Exception {
    List<Future<?>> futures = new ArrayList<>();
    for (Runnable r : work) {
      futures.add(pool.submit(r));
    }
    for (Future<?> f : futures) {
      f.get(120, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}

package dev.soko.operator.reconcile.observe;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DataTls;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.OperandNamespace;
import dev.soko.operator.model.SnapshotMetadata;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.Kind;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Reads (never writes) what the reconciler and the status need: from the informers' caches, and
 * discovery and the server version kept until the next resync. Only one read goes to the API
 * server: a namespace the caches do not hold (someone else's, or none yet).
 */
public final class ClusterObserver {
  static final String DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class";
  static final String DEFAULT_SNAPSHOT_CLASS = "snapshot.storage.kubernetes.io/is-default-class";
  static final String DEFAULT_GROUP_SNAPSHOT_CLASS =
      "groupsnapshot.storage.kubernetes.io/is-default-class";

  private final KubernetesClient client;
  private final Supplier<KubernetesVersion> version;
  private final VersionsTable table;
  private final Discovery discovery;

  /**
   * @param version the server version; the real one asks the API server ({@link #serverVersion}),
   *     tests may simulate an upgrade
   * @param resync how long discovery answers are kept
   */
  public ClusterObserver(
      KubernetesClient client,
      Supplier<KubernetesVersion> version,
      VersionsTable table,
      Duration resync) {
    this.client = client;
    this.version = version;
    this.table = table;
    this.discovery = new Discovery(client, resync, System::nanoTime);
  }

  /** Reads the server's version from /version, once per {@code resync}. */
  public static Supplier<KubernetesVersion> serverVersion(
      KubernetesClient client, Duration resync) {
    return Discovery.memoize(
        () -> KubernetesVersion.parse(client.getKubernetesVersion().getGitVersion()),
        resync,
        System::nanoTime);
  }

  /**
   * The Secrets of the StorageCluster's CA the cache holds, by name: the data path's ({@link
   * DataTls}) and the snapshot metadata sidecar's ({@link SnapshotMetadata#secretName}).
   */
  public static Map<String, Secret> dataTlsSecrets(Names n, ClusterCache cache) {
    Map<String, Secret> out = new HashMap<>();
    List<String> names = new ArrayList<>(DataTls.secretNames(n));
    names.add(SnapshotMetadata.secretName(n));
    for (String name : names) {
      cache.get(KindRegistry.SECRET, n.namespace(), name).ifPresent(s -> out.put(name, (Secret) s));
    }
    return out;
  }

  public ClusterFacts facts(StorageCluster sc, ClusterCache cache) {
    KubernetesVersion v = version.get();
    List<String> checked = new ArrayList<>(KindRegistry.gates());
    VersionsTable.Row row = table.rowFor(v);
    row.requiredApis().stream().filter(a -> !checked.contains(a)).forEach(checked::add);
    row.sidecarApis().values().stream()
        .flatMap(List::stream)
        .filter(a -> !checked.contains(a))
        .forEach(checked::add);
    // The whole group API, not only its classes: one group-version, one discovery request.
    ClusterFacts.GROUP_SNAPSHOT_APIS.stream()
        .filter(a -> !checked.contains(a))
        .forEach(checked::add);
    Set<String> served = discovery.served(checked);
    String cluster = sc.getMetadata().getName();
    String foreignClass = foreignDefault(cache, KindRegistry.STORAGE_CLASS, DEFAULT_CLASS, cluster);
    return new ClusterFacts(
        v,
        served,
        true,
        foreignClass,
        foreignDefaultIfServed(
            cache, served, KindRegistry.VOLUME_SNAPSHOT_CLASS, DEFAULT_SNAPSHOT_CLASS, cluster),
        foreignDefaultIfServed(
            cache,
            served,
            KindRegistry.VOLUME_GROUP_SNAPSHOT_CLASS,
            DEFAULT_GROUP_SNAPSHOT_CLASS,
            cluster),
        foreignNamespace(sc.getSpec().getNamespace(), cache));
  }

  /** The default class of an optional kind someone else made; null while its API is not served. */
  private static String foreignDefaultIfServed(
      ClusterCache cache, Set<String> served, Kind kind, String annotation, String cluster) {
    return served.contains(kind.gate()) ? foreignDefault(cache, kind, annotation, cluster) : null;
  }

  private static String foreignDefault(
      ClusterCache cache, Kind kind, String annotation, String cluster) {
    return cache.list(kind, c -> isForeignDefault(c, annotation, cluster)).stream()
        .map(c -> c.getMetadata().getName())
        .sorted()
        .findFirst()
        .orElse(null);
  }

  /**
   * The namespace when it exists without Soko's label: someone else made it. The cache holds only
   * Soko's namespaces; any other is read from the API server.
   */
  private ClusterFacts.ForeignNamespace foreignNamespace(String name, ClusterCache cache) {
    if (cache.get(KindRegistry.NAMESPACE, null, name).isPresent()) {
      return null;
    }
    Namespace ns = client.namespaces().withName(name).get();
    if (ns == null) {
      return null;
    }
    Map<String, String> labels =
        ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
    return labels.containsKey(Names.LABEL_CLUSTER)
        ? null
        : new ClusterFacts.ForeignNamespace(name, labels.get(OperandNamespace.ENFORCE));
  }

  private static boolean isForeignDefault(HasMetadata c, String annotation, String cluster) {
    Map<String, String> annotations = c.getMetadata().getAnnotations();
    Map<String, String> labels = c.getMetadata().getLabels();
    boolean isDefault = annotations != null && "true".equals(annotations.get(annotation));
    boolean ours = labels != null && cluster.equals(labels.get(Names.LABEL_CLUSTER));
    return isDefault && !ours;
  }

  /** The CSIDriver of that name, Soko's or not. */
  public static CSIDriver csiDriver(ClusterCache cache, String name) {
    return cache.get(KindRegistry.CSI_DRIVER, null, name).map(CSIDriver.class::cast).orElse(null);
  }

  /** Names of PersistentVolumes provisioned by the driver, from the registry's PV informer. */
  public static List<String> volumesOf(String driverName, ClusterCache cache) {
    return cache.indexed(KindRegistry.PERSISTENT_VOLUME, driverName).stream()
        .map(pv -> pv.getMetadata().getName())
        .sorted()
        .toList();
  }

  /**
   * The live state of one StorageCluster's workloads, node plugin pods and node registrations.
   *
   * @param registeredNodes names of the nodes whose CSINode lists the driver
   */
  public record Workloads(
      DaemonSet daemonSet,
      Deployment deployment,
      Set<String> registeredNodes,
      List<Pod> nodePods,
      List<Pod> controllerPods,
      List<CSIStorageCapacity> capacities) {}

  public Workloads workloads(Names names, String driverName, ClusterCache cache) {
    DaemonSet ds =
        (DaemonSet)
            cache
                .get(KindRegistry.DAEMON_SET, names.namespace(), names.workload(Names.NODE))
                .orElse(null);
    Deployment dep =
        (Deployment)
            cache
                .get(KindRegistry.DEPLOYMENT, names.namespace(), names.workload(Names.CONTROLLER))
                .orElse(null);
    Set<String> registered =
        cache.list(KindRegistry.CSI_NODE, n -> registers((CSINode) n, driverName)).stream()
            .map(n -> n.getMetadata().getName())
            .collect(Collectors.toSet());
    List<Pod> pods = pods(cache, names, Names.NODE);
    List<Pod> controllerPods = pods(cache, names, Names.CONTROLLER);
    List<CSIStorageCapacity> capacities =
        cache
            .list(
                KindRegistry.CSI_STORAGE_CAPACITY,
                c -> names.namespace().equals(c.getMetadata().getNamespace()))
            .stream()
            .map(CSIStorageCapacity.class::cast)
            .toList();
    return new Workloads(ds, dep, registered, pods, controllerPods, capacities);
  }

  private static List<Pod> pods(ClusterCache cache, Names names, String component) {
    Map<String, String> selector = names.selector(component);
    return cache
        .list(
            KindRegistry.POD,
            p ->
                names.namespace().equals(p.getMetadata().getNamespace())
                    && p.getMetadata().getLabels() != null
                    && p.getMetadata().getLabels().entrySet().containsAll(selector.entrySet()))
        .stream()
        .map(Pod.class::cast)
        .toList();
  }

  /**
   * The node drivers' reports as this StorageCluster's status reads them (see {@link
   * StorageNodeReports#observe}); nothing is known while the StorageNode API is not cached.
   *
   * @param clusters every StorageCluster's name
   * @param nodes the cluster's Node names (empty when unknown)
   */
  public StorageNodeReports.Observed reports(
      String cluster,
      Set<String> clusters,
      Set<String> nodes,
      Workloads w,
      ClusterCache cache,
      Instant now) {
    if (!cache.watches(KindRegistry.STORAGE_NODE)) {
      return StorageNodeReports.Observed.UNWATCHED;
    }
    List<StorageNode> reports =
        cache.list(KindRegistry.STORAGE_NODE, r -> true).stream()
            .map(StorageNode.class::cast)
            .toList();
    Set<String> pluginNodes =
        w.nodePods().stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
            .map(p -> p.getSpec() == null ? null : p.getSpec().getNodeName())
            .filter(Objects::nonNull)
            .collect(Collectors.toSet());
    boolean known =
        w.daemonSet() != null
            && w.daemonSet().getStatus() != null
            && w.daemonSet().getStatus().getObservedGeneration() != null;
    return StorageNodeReports.observe(reports, cluster, clusters, nodes, pluginNodes, known, now);
  }

  private static boolean registers(CSINode node, String driverName) {
    return node.getSpec() != null
        && node.getSpec().getDrivers() != null
        && node.getSpec().getDrivers().stream()
            .anyMatch(d -> Objects.equals(d.getName(), driverName));
  }
}

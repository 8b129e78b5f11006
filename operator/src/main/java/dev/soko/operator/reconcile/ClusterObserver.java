package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.OperandNamespace;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/** Reads (never writes) what the reconciler and the status need from the cluster. */
public final class ClusterObserver {
  static final String DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class";
  static final String DEFAULT_SNAPSHOT_CLASS = "snapshot.storage.kubernetes.io/is-default-class";

  /** API resources a row may require, checked through discovery. */
  static final List<String> CHECKED_APIS =
      List.of(
          "storage.k8s.io/v1/volumeattributesclasses",
          "snapshot.storage.k8s.io/v1/volumesnapshotclasses",
          "snapshot.storage.k8s.io/v1/volumesnapshotcontents",
          "snapshot.storage.k8s.io/v1/volumesnapshots");

  private final KubernetesClient client;
  private final Supplier<KubernetesVersion> version;

  /**
   * @param version the server version; the real one asks the API server, tests may simulate an
   *     upgrade
   */
  public ClusterObserver(KubernetesClient client, Supplier<KubernetesVersion> version) {
    this.client = client;
    this.version = version;
  }

  /** Reads the server's version from /version. */
  public static Supplier<KubernetesVersion> serverVersion(KubernetesClient client) {
    return () -> KubernetesVersion.parse(client.getKubernetesVersion().getGitVersion());
  }

  ClusterFacts facts(StorageCluster sc) {
    Set<String> served = new HashSet<>();
    for (String api : CHECKED_APIS) {
      int slash = api.lastIndexOf('/');
      if (serves(api.substring(0, slash), api.substring(slash + 1))) {
        served.add(api);
      }
    }
    String cluster = sc.getMetadata().getName();
    String foreignClass =
        client.storage().v1().storageClasses().list().getItems().stream()
            .filter(c -> isForeignDefault(c, DEFAULT_CLASS, cluster))
            .map(c -> c.getMetadata().getName())
            .findFirst()
            .orElse(null);
    String foreignSnapshotClass = null;
    if (served.contains(ClusterFacts.VOLUME_SNAPSHOT_CLASSES)) {
      foreignSnapshotClass =
          client
              .genericKubernetesResources(OwnedKinds.SNAPSHOT_API, OwnedKinds.SNAPSHOT_KIND)
              .list()
              .getItems()
              .stream()
              .filter(c -> isForeignDefault(c, DEFAULT_SNAPSHOT_CLASS, cluster))
              .map(c -> c.getMetadata().getName())
              .findFirst()
              .orElse(null);
    }
    return new ClusterFacts(
        version.get(),
        served,
        true,
        foreignClass,
        foreignSnapshotClass,
        foreignNamespace(sc.getSpec().getNamespace()));
  }

  /** The namespace when it exists without Soko's label: someone else made it. */
  private ClusterFacts.ForeignNamespace foreignNamespace(String name) {
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

  private boolean serves(String groupVersion, String resource) {
    try {
      APIResourceList list = client.getApiResources(groupVersion);
      return list != null
          && list.getResources().stream().map(APIResource::getName).anyMatch(resource::equals);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  private static boolean isForeignDefault(HasMetadata c, String annotation, String cluster) {
    Map<String, String> annotations = c.getMetadata().getAnnotations();
    Map<String, String> labels = c.getMetadata().getLabels();
    boolean isDefault = annotations != null && "true".equals(annotations.get(annotation));
    boolean ours = labels != null && cluster.equals(labels.get(Names.LABEL_CLUSTER));
    return isDefault && !ours;
  }

  /** Names of PersistentVolumes provisioned by the driver. */
  List<String> volumesOf(String driverName) {
    return client.persistentVolumes().list().getItems().stream()
        .filter(pv -> pv.getSpec() != null && pv.getSpec().getCsi() != null)
        .filter(pv -> driverName.equals(pv.getSpec().getCsi().getDriver()))
        .map(PersistentVolume::getMetadata)
        .map(m -> m.getName())
        .sorted()
        .toList();
  }

  /** The live state of one StorageCluster's workloads and node registrations. */
  public record Workloads(
      DaemonSet daemonSet,
      Deployment deployment,
      int registeredNodes,
      List<CSIStorageCapacity> capacities) {}

  Workloads workloads(Names names, String driverName) {
    DaemonSet ds =
        client
            .apps()
            .daemonSets()
            .inNamespace(names.namespace())
            .withName(names.workload(Names.NODE))
            .get();
    Deployment dep =
        client
            .apps()
            .deployments()
            .inNamespace(names.namespace())
            .withName(names.workload(Names.CONTROLLER))
            .get();
    int registered =
        (int)
            client.storage().v1().csiNodes().list().getItems().stream()
                .filter(n -> registers(n, driverName))
                .count();
    List<CSIStorageCapacity> capacities =
        client
            .storage()
            .v1()
            .csiStorageCapacities()
            .inNamespace(names.namespace())
            .list()
            .getItems();
    return new Workloads(ds, dep, registered, capacities);
  }

  private static boolean registers(CSINode node, String driverName) {
    return node.getSpec() != null
        && node.getSpec().getDrivers() != null
        && node.getSpec().getDrivers().stream()
            .anyMatch(d -> Objects.equals(d.getName(), driverName));
  }
}

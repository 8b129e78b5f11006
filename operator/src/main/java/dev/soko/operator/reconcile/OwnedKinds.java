package dev.soko.operator.reconcile;

import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;

/**
 * Every kind Soko creates, in deletion order (workloads before their RBAC, namespace last), with a
 * way to list one StorageCluster's objects of that kind by label.
 */
final class OwnedKinds {
  /** Typed kinds; the VolumeSnapshotClass is generic because its API is optional. */
  static final List<Class<? extends HasMetadata>> TYPED =
      List.of(
          DaemonSet.class,
          Deployment.class,
          StorageClass.class,
          CSIDriver.class,
          RoleBinding.class,
          Role.class,
          ClusterRoleBinding.class,
          ClusterRole.class,
          ServiceAccount.class);

  static final String SNAPSHOT_API = "snapshot.storage.k8s.io/v1";
  static final String SNAPSHOT_KIND = "VolumeSnapshotClass";

  private OwnedKinds() {}

  /** Objects of one StorageCluster, found by label, excluding its Namespace. */
  static List<HasMetadata> list(KubernetesClient client, String cluster, ClusterFacts facts) {
    List<HasMetadata> out = new ArrayList<>();
    for (Class<? extends HasMetadata> kind : TYPED) {
      out.addAll(
          client
              .resources(kind)
              .inAnyNamespace()
              .withLabel(Names.LABEL_CLUSTER, cluster)
              .list()
              .getItems());
    }
    if (facts.serves(ClusterFacts.VOLUME_SNAPSHOT_CLASSES)) {
      for (var item :
          client
              .genericKubernetesResources(SNAPSHOT_API, SNAPSHOT_KIND)
              .withLabel(Names.LABEL_CLUSTER, cluster)
              .list()
              .getItems()) {
        // List items may come without apiVersion and kind; deleting needs both.
        item.setApiVersion(SNAPSHOT_API);
        item.setKind(SNAPSHOT_KIND);
        out.add(item);
      }
    }
    return out;
  }

  static List<Namespace> namespaces(KubernetesClient client, String cluster) {
    return client.namespaces().withLabel(Names.LABEL_CLUSTER, cluster).list().getItems();
  }
}

package dev.soko.operator.model;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.SubjectBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * ServiceAccounts and least-privilege roles per component, following each sidecar's documented RBAC
 * (deploy/kubernetes/rbac.yaml of each kubernetes-csi sidecar at the tags of the versions table),
 * minus what Soko never uses: VolumeAttachments (the driver has no PUBLISH_UNPUBLISH_VOLUME, so the
 * provisioner watches none), group snapshots on the nodes (the controller's csi-group-snapshotter
 * serves them, with csi-snapshotter's rules under the controller's account, only where group
 * snapshots run: {@link DesiredState#groupSnapshotsEnabled}), Pods for the resizer
 * (--handle-volume-inuse-error is off, so it starts no Pod informer), leases for the snapshotters
 * (no leader election with --node-deployment) and for the node's sidecars, and a GET of the
 * capacity owner (level 1: the pod's controller reference names it). One rule set for every row:
 * what the newest sidecar needs. RenderRowsTest compares each rule with each tag.
 */
final class Rbac {
  private static final List<String> READ = List.of("get", "list", "watch");
  private static final List<String> EVENTS = List.of("list", "watch", "create", "update", "patch");

  private Rbac() {}

  /**
   * @param groups group snapshots on (only with {@code snapshots}): the controller's group
   *     snapshotter and its rules
   */
  static List<HasMetadata> objects(
      Names n, boolean snapshots, boolean groups, boolean capacity, boolean health) {
    List<HasMetadata> out = new ArrayList<>();
    String nodeSa = n.serviceAccount(Names.NODE);
    String ctrlSa = n.serviceAccount(Names.CONTROLLER);
    out.add(serviceAccount(n, nodeSa, Names.NODE));
    out.add(serviceAccount(n, ctrlSa, Names.CONTROLLER));

    List<PolicyRule> provisioner =
        new ArrayList<>(
            List.of(
                rule(
                    "",
                    List.of("persistentvolumes"),
                    List.of("get", "list", "watch", "create", "patch", "delete")),
                rule(
                    "",
                    List.of("persistentvolumeclaims"),
                    List.of("get", "list", "watch", "update")),
                rule("storage.k8s.io", List.of("storageclasses", "csinodes"), READ),
                // The class a PVC names, read with a GET when it creates the volume
                // (pkg/controller/controller.go); not in upstream's rbac.yaml.
                rule("storage.k8s.io", List.of("volumeattributesclasses"), List.of("get")),
                rule("", List.of("nodes"), READ),
                rule("", List.of("events"), EVENTS),
                // watch and update on snapshots: from v6 the provisioner puts a finalizer on a
                // snapshot while a volume is restored from it, and sweeps orphaned ones.
                rule(
                    "snapshot.storage.k8s.io",
                    List.of("volumesnapshots"),
                    List.of("get", "list", "watch", "update")),
                // The driver, under the same account, reads two of these: the PVs (a clone of a
                // volume its node does not hold finds the source's node in the source PV's node
                // affinity) and the contents below (a restore of a snapshot its node does not
                // hold finds the node that does by the managed-by label of the content naming
                // it), with snapshots off as well, so no role of its own.
                rule(
                    "snapshot.storage.k8s.io",
                    List.of("volumesnapshotcontents"),
                    List.of("get", "list"))));
    out.add(clusterRole(n, "provisioner", Names.NODE, provisioner));
    out.add(clusterBinding(n, "provisioner", Names.NODE, nodeSa));
    // The driver itself: it applies its node's StorageNode (server-side apply: get, create and
    // patch, no list or watch), records an Event when a pool is refused, and reads and watches its
    // own Node's labels for the pools' node selectors (a GET, then a watch with a field selector
    // on its name: never a list). A restore of a snapshot another node holds GETs that node's
    // Node (is it gone?) and StorageNode (its data endpoint): the same two rules, by name. RBAC
    // cannot narrow a ClusterRole to the pod's own node.
    out.add(
        clusterRole(
            n,
            "pool-report",
            Names.NODE,
            List.of(
                rule("soko.dev", List.of("storagenodes"), List.of("get", "create", "patch")),
                rule("", List.of("events"), List.of("create", "patch")),
                rule("", List.of("nodes"), List.of("get", "watch")))));
    out.add(clusterBinding(n, "pool-report", Names.NODE, nodeSa));
    // The two halves of what the controller's driver hands to a volume's node (growth,
    // ModifyVolume, the group snapshot calls) through the driver's NodeRequests, in the operand
    // namespace: the node's driver lists and watches the requests for its node and answers in their
    // status, never writing a spec; the controller's writes them (server-side apply), reads their
    // status, lists them and deletes the ones it is done with. The controller finds a volume's
    // node in its PV, which the resizer's rules already let its account read.
    out.add(
        role(
            n,
            "node-requests-node",
            Names.NODE,
            List.of(
                rule("soko.dev", List.of("noderequests"), READ),
                rule("soko.dev", List.of("noderequests/status"), List.of("patch")))));
    out.add(roleBinding(n, "node-requests-node", Names.NODE, nodeSa));
    out.add(
        role(
            n,
            "node-requests-controller",
            Names.CONTROLLER,
            List.of(
                rule(
                    "soko.dev",
                    List.of("noderequests"),
                    List.of("get", "list", "create", "patch", "delete")))));
    out.add(roleBinding(n, "node-requests-controller", Names.CONTROLLER, ctrlSa));
    // When a node does not answer a growth, the controller's driver tells a node that is gone (its
    // Node answers 404: UNAVAILABLE until it is back) from one whose driver is only down (the
    // kubelet's NodeExpandVolume grows it): a GET by name, never a list.
    out.add(
        clusterRole(
            n,
            "node-presence",
            Names.CONTROLLER,
            List.of(rule("", List.of("nodes"), List.of("get")))));
    out.add(clusterBinding(n, "node-presence", Names.CONTROLLER, ctrlSa));
    // The controller's driver relays a snapshot's block metadata (CSI SnapshotMetadata) to the node
    // that holds it, found as a node's restore finds it: the VolumeSnapshotContents listed (the
    // one naming the snapshot carries the node in its managed-by label), that node's Node by name
    // (is it gone?) and its StorageNode by name (the data endpoint).
    out.add(
        clusterRole(
            n,
            "snapshot-homes",
            Names.CONTROLLER,
            List.of(
                rule("snapshot.storage.k8s.io", List.of("volumesnapshotcontents"), List.of("list")),
                rule("soko.dev", List.of("storagenodes"), List.of("get")),
                rule("", List.of("nodes"), List.of("get")))));
    out.add(clusterBinding(n, "snapshot-homes", Names.CONTROLLER, ctrlSa));
    if (capacity) {
      // The provisioner publishes CSIStorageCapacity in its own namespace, owned by its DaemonSet.
      out.add(
          role(
              n,
              "capacity",
              Names.NODE,
              List.of(
                  rule(
                      "storage.k8s.io",
                      List.of("csistoragecapacities"),
                      List.of("get", "list", "watch", "create", "update", "patch", "delete")),
                  rule("", List.of("pods"), List.of("get")))));
      out.add(roleBinding(n, "capacity", Names.NODE, nodeSa));
    }
    if (snapshots) {
      // csi-snapshotter's rules. The driver, under the same account, uses three of them: it lists
      // and watches the contents without a managed-by label and patches that label onto the ones
      // whose snapshot its node holds (--label-imported-snapshots), so it needs no role of its own.
      List<PolicyRule> snapshotter = new ArrayList<>();
      snapshotter.add(rule("", List.of("events"), EVENTS));
      snapshotter.addAll(snapshotterRules("snapshot.storage.k8s.io", "volumesnapshot"));
      out.add(clusterRole(n, "snapshotter", Names.NODE, snapshotter));
      out.add(clusterBinding(n, "snapshotter", Names.NODE, nodeSa));
    }
    if (snapshots && groups) {
      // The controller's csi-group-snapshotter: csi-snapshotter's rules
      // (deploy/kubernetes/csi-snapshotter/rbac-csi-snapshotter.yaml @v8.7.0) without its leases.
      // The controller's driver, under the same account, lists and watches the group contents and
      // classes and patches the managed-by label onto its driver's ones.
      List<PolicyRule> groupSnapshotter = new ArrayList<>();
      groupSnapshotter.add(rule("", List.of("events"), EVENTS));
      groupSnapshotter.addAll(snapshotterRules("snapshot.storage.k8s.io", "volumesnapshot"));
      groupSnapshotter.addAll(
          snapshotterRules("groupsnapshot.storage.k8s.io", "volumegroupsnapshot"));
      // Beyond upstream, for the driver: a class an admin or a test suite makes for this driver
      // gets the managed-by label too, without which the group snapshotter cannot see it.
      groupSnapshotter.add(
          rule(
              "groupsnapshot.storage.k8s.io",
              List.of("volumegroupsnapshotclasses"),
              List.of("patch")));
      out.add(clusterRole(n, "group-snapshotter", Names.CONTROLLER, groupSnapshotter));
      out.add(clusterBinding(n, "group-snapshotter", Names.CONTROLLER, ctrlSa));
    }

    out.add(
        clusterRole(
            n,
            "resizer",
            Names.CONTROLLER,
            List.of(
                rule("", List.of("persistentvolumes"), List.of("get", "list", "watch", "patch")),
                rule("", List.of("persistentvolumeclaims"), READ),
                rule("", List.of("persistentvolumeclaims/status"), List.of("patch")),
                rule("", List.of("events"), EVENTS),
                rule("storage.k8s.io", List.of("volumeattributesclasses"), READ))));
    out.add(clusterBinding(n, "resizer", Names.CONTROLLER, ctrlSa));
    if (health) {
      out.add(
          clusterRole(
              n,
              "health-monitor",
              Names.CONTROLLER,
              List.of(
                  rule(
                      "",
                      List.of("persistentvolumes", "persistentvolumeclaims", "nodes", "pods"),
                      READ),
                  rule("", List.of("events"), EVENTS))));
      out.add(clusterBinding(n, "health-monitor", Names.CONTROLLER, ctrlSa));
    }
    // Leader election of the controller's sidecars.
    out.add(
        role(
            n,
            "leader-election",
            Names.CONTROLLER,
            List.of(
                rule(
                    "coordination.k8s.io",
                    List.of("leases"),
                    List.of("get", "list", "watch", "create", "update", "delete")))));
    out.add(roleBinding(n, "leader-election", Names.CONTROLLER, ctrlSa));
    return out;
  }

  /**
   * csi-snapshotter's rules on one snapshot API ({@code prefix}: volumesnapshot or
   * volumegroupsnapshot): it reads the classes and updates the contents and their status.
   */
  private static List<PolicyRule> snapshotterRules(String group, String prefix) {
    return List.of(
        rule(group, List.of(prefix + "classes"), READ),
        rule(
            group,
            List.of(prefix + "contents"),
            List.of("get", "list", "watch", "update", "patch")),
        rule(group, List.of(prefix + "contents/status"), List.of("update", "patch")));
  }

  private static PolicyRule rule(String group, List<String> resources, List<String> verbs) {
    return new PolicyRuleBuilder()
        .withApiGroups(group)
        .withResources(resources)
        .withVerbs(verbs)
        .build();
  }

  private static HasMetadata serviceAccount(Names n, String name, String component) {
    return new ServiceAccountBuilder()
        .withMetadata(meta(n, name, n.namespace(), component))
        .build();
  }

  private static HasMetadata clusterRole(
      Names n, String role, String component, List<PolicyRule> rules) {
    return new ClusterRoleBuilder()
        .withMetadata(meta(n, n.clusterRole(role), null, component))
        .withRules(rules)
        .build();
  }

  private static HasMetadata clusterBinding(Names n, String role, String component, String sa) {
    return new ClusterRoleBindingBuilder()
        .withMetadata(meta(n, n.clusterRole(role), null, component))
        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", n.clusterRole(role))
        .withSubjects(
            new SubjectBuilder()
                .withKind("ServiceAccount")
                .withName(sa)
                .withNamespace(n.namespace())
                .build())
        .build();
  }

  private static HasMetadata role(Names n, String role, String component, List<PolicyRule> rules) {
    return new RoleBuilder()
        .withMetadata(meta(n, n.workload(role), n.namespace(), component))
        .withRules(rules)
        .build();
  }

  private static HasMetadata roleBinding(Names n, String role, String component, String sa) {
    return new RoleBindingBuilder()
        .withMetadata(meta(n, n.workload(role), n.namespace(), component))
        .withNewRoleRef("rbac.authorization.k8s.io", "Role", n.workload(role))
        .withSubjects(
            new SubjectBuilder()
                .withKind("ServiceAccount")
                .withName(sa)
                .withNamespace(n.namespace())
                .build())
        .build();
  }

  static io.fabric8.kubernetes.api.model.ObjectMeta meta(
      Names n, String name, String namespace, String component) {
    return new ObjectMetaBuilder()
        .withName(name)
        .withNamespace(namespace)
        .withLabels(n.labels(component))
        .build();
  }
}

package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.Registration;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The RBAC of every row of the versions table (as {@link RenderRowsTest}, whose rows it takes)
 * against each sidecar's deploy/kubernetes RBAC at the row's tag ({@link Upstream}), with each
 * deliberate difference named and sourced.
 */
class RenderRowsRbacTest {
  /** "group/resource" → verbs of the rules of one Soko role. */
  private static Map<String, Set<String>> rules(List<PolicyRule> rules) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (PolicyRule r : rules) {
      for (String group : r.getApiGroups()) {
        for (String resource : r.getResources()) {
          out.computeIfAbsent(group + "/" + resource, k -> new TreeSet<>()).addAll(r.getVerbs());
        }
      }
    }
    return out;
  }

  private static Map<String, Set<String>> granted(DesiredState d, String... roleSuffixes) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (HasMetadata o : d.rbac()) {
      for (String suffix : roleSuffixes) {
        if (!o.getMetadata().getName().endsWith(suffix)) {
          continue;
        }
        List<PolicyRule> r =
            o instanceof ClusterRole cr
                ? cr.getRules()
                : o instanceof Role ro ? ro.getRules() : null;
        if (r != null) {
          rules(r).forEach((k, v) -> out.computeIfAbsent(k, x -> new TreeSet<>()).addAll(v));
        }
      }
    }
    return out;
  }

  private static final String GROUPS = "groupsnapshot.storage.k8s.io/";

  private static Map<String, Set<String>> sorted(Map<String, Set<String>> m) {
    Map<String, Set<String>> out = new TreeMap<>();
    m.forEach((k, v) -> out.put(k, new TreeSet<>(v)));
    return out;
  }

  /**
   * The rules granted to each sidecar are its upstream rbac.yaml at the row's tag, with the
   * deliberate differences named here (and in Rbac's javadoc).
   */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("dev.soko.operator.model.RenderRowsTest#rows")
  void eachSidecarIsGrantedItsUpstreamRulesWithTheNamedDifferences(int minor, Registration mode) {
    DesiredState d = RenderRowsTest.render(minor, mode);

    Upstream.Release prov = RenderRowsTest.release(minor, Component.PROVISIONER);
    Map<String, Set<String>> expected = sorted(prov.rules());
    // The driver has no PUBLISH_UNPUBLISH_VOLUME: no VolumeAttachment informer
    // (cmd/csi-provisioner/csi-provisioner.go, same tag).
    expected.remove("storage.k8s.io/volumeattachments");
    // No leader election on nodes; capacity-ownerref-level=1 reads only the pod
    // (pkg/owner/owner.go, same tag: "avoid one lookup and thus the need for RBAC GET").
    expected.remove("coordination.k8s.io/leases");
    expected.remove("apps/replicasets");
    // The PVC's VolumeAttributesClass, read with a GET (pkg/controller/controller.go).
    expected.put("storage.k8s.io/volumeattributesclasses", new TreeSet<>(Set.of("get")));
    // One rule set for every row: the newest provisioner's. v5+ patches PVs (HonorPVReclaimPolicy
    // finalizer), v6+ watches and updates snapshots (source protection finalizer).
    expected.get("/persistentvolumes").add("patch");
    expected.get("snapshot.storage.k8s.io/volumesnapshots").addAll(Set.of("watch", "update"));
    assertThat(granted(d, ":provisioner", "-capacity"))
        .as("csi-provisioner vs %s", prov.rbacSource())
        .isEqualTo(expected);

    Upstream.Release snap = RenderRowsTest.release(minor, Component.SNAPSHOTTER);
    expected = sorted(snap.rules());
    // No group snapshots; no leader election on nodes.
    expected.keySet().removeIf(k -> k.startsWith("groupsnapshot.storage.k8s.io/"));
    expected.remove("coordination.k8s.io/leases");
    // v7.0.2 creates VolumeSnapshots and contents only for group snapshot members
    // (pkg/sidecar-controller/groupsnapshot_helper.go @v7.0.2); v8 moved that to the controller.
    expected.remove("snapshot.storage.k8s.io/volumesnapshots");
    expected.get("snapshot.storage.k8s.io/volumesnapshotcontents").remove("create");
    assertThat(granted(d, ":snapshotter"))
        .as("csi-snapshotter vs %s", snap.rbacSource())
        .isEqualTo(expected);
    if (RenderRowsTest.row(minor).groupSnapshots()) {
      // The controller's group snapshotter (rendered offline: every API counts as served): all of
      // the upstream rules but the leases (--node-deployment, no leader election).
      expected = sorted(snap.rules());
      expected.remove("coordination.k8s.io/leases");
      expected.get(GROUPS + "volumegroupsnapshotclasses").add("patch"); // the driver's labeller
      assertThat(granted(d, ":group-snapshotter"))
          .as("csi-group-snapshotter vs %s", snap.rbacSource())
          .isEqualTo(expected);
    }

    Upstream.Release res = RenderRowsTest.release(minor, Component.RESIZER);
    expected = sorted(res.rules());
    // --handle-volume-inuse-error=false: no Pod informer (pkg/controller/controller.go, same tag).
    expected.remove("/pods");
    assertThat(granted(d, ":resizer", "-leader-election"))
        .as("csi-resizer vs %s", res.rbacSource())
        .isEqualTo(expected);
    Map<String, String> resizer =
        RenderRowsTest.flags(
            Fixtures.container(Fixtures.controllerPod(d), Component.RESIZER.key()));
    assertThat(resizer).containsEntry("handle-volume-inuse-error", "false");
    // The lease lives where the Role that grants it is (upstream: "namespace: default # TODO:
    // replace with the namespace you want for your sidecar", same file).
    Role leases =
        d.rbac().stream()
            .filter(
                o -> o instanceof Role && o.getMetadata().getName().endsWith("-leader-election"))
            .map(Role.class::cast)
            .findFirst()
            .orElseThrow();
    assertThat(resizer)
        .as("--leader-election-namespace is the namespace of the leases Role")
        .containsEntry("leader-election-namespace", leases.getMetadata().getNamespace());
    assertThat(
            d.rbac().stream()
                .filter(o -> o.getMetadata().getName().endsWith("-leader-election"))
                .filter(o -> !(o instanceof Role))
                .map(o -> o.getMetadata().getNamespace())
                .toList())
        .as("its RoleBinding is in the same namespace")
        .containsOnly(leases.getMetadata().getNamespace());
  }

  /**
   * Group rules go to the controller's group snapshotter alone, exactly upstream's (and the
   * driver's patch of group classes), on a row whose snapshotter serves groups and a cluster that
   * serves the group API; without either, no group rule is granted at all. The node's account never
   * holds one.
   */
  @ParameterizedTest(name = "1.{0} {1}")
  @MethodSource("dev.soko.operator.model.RenderRowsTest#rows")
  void groupRulesOnlyForTheControllersGroupSnapshotterWhereGroupSnapshotsRun(
      int minor, Registration mode) {
    Upstream.Release snap = RenderRowsTest.release(minor, Component.SNAPSHOTTER);
    Map<String, Set<String>> upstream = sorted(snap.rules());
    upstream.keySet().removeIf(k -> !k.startsWith(GROUPS));
    // and the driver's labelling of classes made for it
    upstream
        .computeIfAbsent(GROUPS + "volumegroupsnapshotclasses", k -> new TreeSet<>())
        .add("patch");
    for (boolean groupApi : new boolean[] {true, false}) {
      DesiredState d = RenderRowsTest.render(minor, mode, groupApi);
      Map<String, Set<String>> all = granted(d, "");
      all.keySet().removeIf(k -> !k.startsWith(GROUPS));
      Map<String, Set<String>> node = granted(d, ":snapshotter");
      node.keySet().removeIf(k -> !k.startsWith(GROUPS));
      assertThat(node).as("no group rule for the nodes' snapshotters").isEmpty();
      if (groupApi && RenderRowsTest.row(minor).groupSnapshots()) {
        Map<String, Set<String>> groups = granted(d, ":group-snapshotter");
        groups.keySet().removeIf(k -> !k.startsWith(GROUPS));
        assertThat(groups)
            .as("csi-group-snapshotter group rules vs %s", snap.rbacSource())
            .isEqualTo(upstream)
            .isEqualTo(all)
            .containsEntry(
                GROUPS + "volumegroupsnapshotcontents",
                new TreeSet<>(Set.of("get", "list", "watch", "update", "patch")));
        assertThat(
                d.rbac().stream()
                    .filter(o -> o.getMetadata().getName().endsWith(":group-snapshotter"))
                    .map(o -> o.getMetadata().getLabels().get("app.kubernetes.io/component")))
            .as("role and binding of the controller")
            .containsOnly(Names.CONTROLLER);
      } else {
        assertThat(all).as("no group rule without group snapshots").isEmpty();
      }
    }
  }
}

package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the node plugin's driver reads to restore a snapshot another node holds (the driver's
 * report/SnapshotHomes): the VolumeSnapshotContents, listed, to find the node a snapshot's content
 * is labelled with; that node's Node, to tell one that is gone; and its StorageNode, for its data
 * endpoint. All cluster-wide, under the node account, whether or not csi-snapshotter runs there;
 * the controller's account reads the same to relay a snapshot's block metadata to its node.
 */
class RbacTest {
  private static final Names NAMES = new Names("fast", "soko-fast");

  /** The verbs on {@code group/resource} of every ClusterRole bound to the node account. */
  private static Set<String> nodeVerbs(List<HasMetadata> rbac, String group, String resource) {
    return verbs(rbac, Names.NODE, group, resource);
  }

  /**
   * The verbs on {@code group/resource} of every ClusterRole bound to {@code component}'s account.
   */
  private static Set<String> verbs(
      List<HasMetadata> rbac, String component, String group, String resource) {
    String account = NAMES.serviceAccount(component);
    List<String> bound =
        rbac.stream()
            .filter(ClusterRoleBinding.class::isInstance)
            .map(ClusterRoleBinding.class::cast)
            .filter(b -> b.getSubjects().stream().anyMatch(s -> account.equals(s.getName())))
            .map(b -> b.getRoleRef().getName())
            .toList();
    Set<String> verbs = new TreeSet<>();
    rbac.stream()
        .filter(o -> o instanceof ClusterRole && bound.contains(o.getMetadata().getName()))
        .flatMap(o -> ((ClusterRole) o).getRules().stream())
        .filter(r -> r.getApiGroups().contains(group) && r.getResources().contains(resource))
        .forEach(r -> verbs.addAll(r.getVerbs()));
    return verbs;
  }

  @ParameterizedTest(name = "snapshotter on the node: {0}")
  @ValueSource(booleans = {true, false})
  void theNodeAccountMayReadWhatARestoreOfAnotherNodesSnapshotLooksUp(boolean snapshots) {
    List<HasMetadata> rbac = Rbac.objects(NAMES, snapshots, false, true, false);
    assertThat(nodeVerbs(rbac, "snapshot.storage.k8s.io", "volumesnapshotcontents"))
        .contains("list");
    assertThat(nodeVerbs(rbac, "", "nodes")).contains("get");
    assertThat(nodeVerbs(rbac, "soko.dev", "storagenodes")).contains("get");
  }

  /**
   * The controller's driver finds a snapshot's node the same way to relay its block metadata: a
   * list of the contents and GETs of one Node and one StorageNode, nothing more on them.
   */
  @ParameterizedTest(name = "snapshotter on the node: {0}")
  @ValueSource(booleans = {true, false})
  void theControllerAccountMayReadWhatTheMetadataRelayLooksUp(boolean snapshots) {
    List<HasMetadata> rbac = Rbac.objects(NAMES, snapshots, false, true, false);
    assertThat(verbs(rbac, Names.CONTROLLER, "snapshot.storage.k8s.io", "volumesnapshotcontents"))
        .contains("list");
    assertThat(verbs(rbac, Names.CONTROLLER, "", "nodes")).contains("get");
    assertThat(verbs(rbac, Names.CONTROLLER, "soko.dev", "storagenodes")).containsExactly("get");
  }
}

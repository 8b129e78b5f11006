package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.SnapshotSpec;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A VolumeGroupSnapshotClass's driver and deletionPolicy are immutable: Soko's class is deleted
 * (and then applied anew) when the StorageCluster changes one, and only then; someone else's class
 * is never deleted. Against fabric8's mock API server, which records the calls.
 */
@EnableKubernetesMockClient
class GroupSnapshotClassReplacerTest {
  private static final String PATH =
      "/apis/groupsnapshot.storage.k8s.io/v1/volumegroupsnapshotclasses/fast-snapshots";

  KubernetesClient client;
  KubernetesMockServer server;

  @BeforeEach
  void discoveryAndDelete() {
    server
        .expect()
        .get()
        .withPath("/apis/groupsnapshot.storage.k8s.io/v1")
        .andReturn(
            200,
            new APIResourceListBuilder()
                .withGroupVersion("groupsnapshot.storage.k8s.io/v1")
                .addToResources(
                    new APIResourceBuilder()
                        .withName("volumegroupsnapshotclasses")
                        .withKind("VolumeGroupSnapshotClass")
                        .withNamespaced(false)
                        .withVerbs("get", "list", "watch", "create", "patch", "delete")
                        .build())
                .build())
        .always();
    server.expect().delete().withPath(PATH).andReturn(200, "{}").always();
  }

  private static GenericKubernetesResource desired(SnapshotSpec.DeletionPolicy policy) {
    var sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setDeletionPolicy(policy);
    return DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")))
        .groupSnapshotClass();
  }

  private List<String> deletes() throws InterruptedException {
    List<String> out = new ArrayList<>();
    int n = server.getRequestCount();
    for (int i = 0; i < n; i++) {
      RecordedRequest r = server.takeRequest();
      if (r.getMethod().equals("DELETE")) {
        out.add(r.getPath());
      }
    }
    return out;
  }

  @Test
  void soRecreatedOnlyWhenAnImmutableFieldChanged() throws Exception {
    var replacer = new GroupSnapshotClassReplacer(client);
    GenericKubernetesResource existing = desired(SnapshotSpec.DeletionPolicy.Delete);
    var cache = new FakeClusterCache().with(existing);

    assertThat(
            replacer.replaceIfImmutableChanged(
                desired(SnapshotSpec.DeletionPolicy.Delete), "fast", cache))
        .isNull();
    assertThat(deletes()).isEmpty();

    assertThat(
            replacer.replaceIfImmutableChanged(
                desired(SnapshotSpec.DeletionPolicy.Retain), "fast", cache))
        .isEqualTo("deletionPolicy Delete -> Retain");
    assertThat(deletes()).containsExactly(PATH);
  }

  @Test
  void aDriverRenameRecreatesItToo() {
    GenericKubernetesResource renamed = desired(SnapshotSpec.DeletionPolicy.Delete);
    renamed.getAdditionalProperties().put("driver", "other.csi.soko.dev");
    assertThat(
            GroupSnapshotClassReplacer.immutableDifferences(
                renamed, desired(SnapshotSpec.DeletionPolicy.Delete)))
        .isEqualTo("driver fast.csi.soko.dev -> other.csi.soko.dev");
  }

  @Test
  void someoneElsesClassOfThatNameIsNeverDeleted() throws Exception {
    GenericKubernetesResource theirs =
        Serialization.clone(desired(SnapshotSpec.DeletionPolicy.Delete));
    theirs.getMetadata().setLabels(null);
    var cache = new FakeClusterCache().with(theirs);
    assertThat(
            new GroupSnapshotClassReplacer(client)
                .replaceIfImmutableChanged(
                    desired(SnapshotSpec.DeletionPolicy.Retain), "fast", cache))
        .isNull();
    assertThat(deletes()).isEmpty();
  }
}

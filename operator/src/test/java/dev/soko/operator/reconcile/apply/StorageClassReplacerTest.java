package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.EncryptionMode;
import dev.soko.api.v1alpha1.EncryptionSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A StorageClass's parameters, provisioner, reclaimPolicy and volumeBindingMode are immutable:
 * Soko's class is deleted (and then applied anew) when the StorageCluster changes one, and only
 * then; a mutable change (allowVolumeExpansion) is applied in place; someone else's class is never
 * deleted. Against fabric8's mock API server, which records the calls.
 */
@EnableKubernetesMockClient
class StorageClassReplacerTest {
  KubernetesClient client;
  KubernetesMockServer server;

  @BeforeEach
  void deletes200() {
    server.expect().delete().withPath(path(firstClass(c -> {}))).andReturn(200, "{}").always();
  }

  private static StorageClass firstClass(Consumer<StorageClassSpec> change) {
    StorageCluster sc = Fixtures.sample();
    change.accept(sc.getSpec().getStorageClasses().get(0));
    return DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")))
        .storageClasses()
        .get(0);
  }

  private static String path(StorageClass c) {
    return "/apis/storage.k8s.io/v1/storageclasses/" + c.getMetadata().getName();
  }

  private static String cluster(StorageClass c) {
    return c.getMetadata().getLabels().get(dev.soko.operator.model.Names.LABEL_CLUSTER);
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
  void encryptionAddedRecreatesTheClassAndSaysWhichParametersChanged() throws Exception {
    StorageClass existing = firstClass(c -> {});
    var cache = new FakeClusterCache().with(existing);
    var replacer = new StorageClassReplacer(client);

    assertThat(replacer.replaceIfImmutableChanged(List.of(existing), cluster(existing), cache))
        .isEmpty();
    assertThat(deletes()).isEmpty();

    EncryptionSpec encryption = new EncryptionSpec();
    encryption.setMode(EncryptionMode.fscrypt);
    StorageClass encrypted = firstClass(c -> c.setEncryption(encryption));
    List<String> replaced =
        replacer.replaceIfImmutableChanged(List.of(encrypted), cluster(existing), cache);
    assertThat(replaced).hasSize(1);
    assertThat(replaced.get(0))
        .startsWith(existing.getMetadata().getName() + ": parameters ")
        .contains("encryption added");
    assertThat(deletes()).containsExactly(path(existing));
  }

  @Test
  void eachImmutableFieldIsNamedWithItsOldAndNewValue() {
    StorageClass existing = firstClass(c -> {});
    StorageClass changed =
        firstClass(
            c -> {
              c.setReclaimPolicy(StorageClassSpec.ReclaimPolicy.Retain);
              c.setVolumeBindingMode(StorageClassSpec.BindingMode.Immediate);
            });
    assertThat(StorageClassReplacer.immutableDifferences(changed, existing))
        .isEqualTo(
            "reclaimPolicy Delete -> Retain, volumeBindingMode WaitForFirstConsumer -> Immediate");
  }

  @Test
  void aMutableChangeIsLeftToTheApply() throws Exception {
    StorageClass existing = firstClass(c -> {});
    StorageClass noExpansion = firstClass(c -> c.setAllowVolumeExpansion(false));
    assertThat(
            new StorageClassReplacer(client)
                .replaceIfImmutableChanged(
                    List.of(noExpansion), cluster(existing), new FakeClusterCache().with(existing)))
        .isEmpty();
    assertThat(deletes()).isEmpty();
  }

  @Test
  void someoneElsesClassOfThatNameIsNeverDeleted() throws Exception {
    StorageClass theirs = Serialization.clone(firstClass(c -> {}));
    String cluster = cluster(theirs);
    theirs.getMetadata().setLabels(null);
    StorageClass retained =
        firstClass(c -> c.setReclaimPolicy(StorageClassSpec.ReclaimPolicy.Retain));
    assertThat(
            new StorageClassReplacer(client)
                .replaceIfImmutableChanged(
                    List.of(retained), cluster, new FakeClusterCache().with(theirs)))
        .isEmpty();
    assertThat(deletes()).isEmpty();
  }
}

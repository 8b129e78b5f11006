package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Uninstall deletes the workloads, and the RBAC, classes and namespace their sidecars still use
 * only once the workloads' pods are gone (or the bound passed). Against fabric8's mock API server,
 * which records the deletes; the cache is a hand-written fake.
 */
@EnableKubernetesMockClient(crud = true)
class UninstallerTest {
  private static final ClusterFacts FACTS =
      ClusterFacts.offline(KubernetesVersion.parse("v1.36.3"));
  private static final String NAMESPACE = "soko-system";

  KubernetesClient client;
  KubernetesMockServer server;

  private final AtomicReference<Instant> now =
      new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
  private final StorageCluster cluster = storageCluster();
  private FakeClusterCache cache;
  private Uninstaller uninstaller;
  private int taken;

  @BeforeEach
  void installed() {
    uninstaller = new Uninstaller(new Pruner(client), Duration.ofMinutes(2), now::get);
    cache =
        new FakeClusterCache()
            .with(new NamespaceBuilder().withMetadata(meta(NAMESPACE, null)).build())
            .with(new ServiceAccountBuilder().withMetadata(meta("soko-node", NAMESPACE)).build())
            .with(new ClusterRoleBuilder().withMetadata(meta("soko-node", null)).build())
            .with(new ClusterRoleBindingBuilder().withMetadata(meta("soko-node", null)).build())
            .with(new RoleBuilder().withMetadata(meta("soko-node", NAMESPACE)).build())
            .with(new RoleBindingBuilder().withMetadata(meta("soko-node", NAMESPACE)).build())
            .with(new StorageClassBuilder().withMetadata(meta("soko", null)).build())
            .with(new DaemonSetBuilder().withMetadata(meta("soko-node", NAMESPACE)).build())
            .with(new DeploymentBuilder().withMetadata(meta("soko-controller", NAMESPACE)).build())
            .with(new PodBuilder().withMetadata(meta("soko-node-x7k2p", NAMESPACE)).build());
  }

  @Test
  void whileAPodOfTheWorkloadsIsLeftOnlyTheWorkloadsAreDeleted() throws Exception {
    Uninstaller.Step first = uninstaller.uninstall(cluster, FACTS, List.of(cluster), cache);

    assertThat(first.done()).isFalse();
    assertThat(first.waitingFor()).contains("1 pod(s)", NAMESPACE + "/soko-node-x7k2p");
    assertThat(first.recheck()).isEqualTo(Uninstaller.RECHECK);
    assertThat(deletedKinds()).containsExactly("daemonsets", "deployments");

    // The pod ended, as a kubelet confirms it after the grace period.
    cache.objects.removeIf(o -> o.getKind().equals("Pod"));
    Uninstaller.Step second = uninstaller.uninstall(cluster, FACTS, List.of(cluster), cache);

    assertThat(second.done()).isTrue();
    assertThat(deletedKinds())
        .contains(
            "storageclasses",
            "clusterrolebindings",
            "clusterroles",
            "rolebindings",
            "roles",
            "serviceaccounts",
            "namespaces");
  }

  @Test
  void afterTheBoundTheRestIsDeletedThoughAPodIsLeft() throws Exception {
    assertThat(uninstaller.uninstall(cluster, FACTS, List.of(cluster), cache).done()).isFalse();
    now.set(now.get().plus(Duration.ofSeconds(119)));
    Uninstaller.Step almost = uninstaller.uninstall(cluster, FACTS, List.of(cluster), cache);
    assertThat(almost.done()).isFalse();
    assertThat(almost.recheck()).isEqualTo(Duration.ofSeconds(1));
    assertThat(deletedKinds()).doesNotContain("clusterroles", "roles", "namespaces");

    now.set(now.get().plus(Duration.ofSeconds(1)));
    assertThat(uninstaller.uninstall(cluster, FACTS, List.of(cluster), cache).done()).isTrue();
    assertThat(deletedKinds()).contains("clusterroles", "roles", "storageclasses", "namespaces");
  }

  @Test
  void withoutPodsEverythingGoesInOneStep() throws Exception {
    cache.objects.removeIf(o -> o.getKind().equals("Pod"));

    assertThat(uninstaller.uninstall(cluster, FACTS, List.of(cluster), cache).done()).isTrue();
    assertThat(deletedKinds()).startsWith("daemonsets", "deployments").contains("namespaces");
  }

  /** The resource (plural) of each DELETE the server got since the last call, in order. */
  private List<String> deletedKinds() throws InterruptedException {
    List<String> out = new ArrayList<>();
    for (int n = server.getRequestCount(); taken < n; taken++) {
      RecordedRequest r = server.takeRequest();
      if (r.getMethod().equals("DELETE")) {
        String[] path = r.getPath().split("\\?")[0].split("/");
        out.add(path[path.length - 2]);
      }
    }
    return out;
  }

  private static ObjectMeta meta(String name, String namespace) {
    return new ObjectMetaBuilder()
        .withName(name)
        .withNamespace(namespace)
        .withLabels(Map.of(Names.LABEL_CLUSTER, "soko"))
        .build();
  }

  private static StorageCluster storageCluster() {
    StorageCluster sc = new StorageCluster();
    sc.setMetadata(new ObjectMetaBuilder().withName("soko").withUid("uid-soko").build());
    StorageClusterSpec spec = new StorageClusterSpec();
    spec.setNamespace(NAMESPACE);
    sc.setSpec(spec);
    return sc;
  }
}

package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pod Security admission (on by default in kube-apiserver) against the namespaces Soko installs
 * into: the one it creates admits the privileged node plugin, one it did not create is left as its
 * owner made it. Pods are created with server-side dry run, so admission runs in full and nothing
 * needs a kubelet.
 */
class PodSecurityIT {
  static TestCluster cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    StorageClusterLifecycleIT.start();
    cluster = TestCluster.get();
    admin = cluster.admin;
  }

  /** A pod as the DaemonSet controller would make it from the template. */
  private static Pod nodePluginPod(DaemonSet ds, String namespace) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(ds.getMetadata().getName() + "-dry-run")
        .withNamespace(namespace)
        .withLabels(ds.getSpec().getTemplate().getMetadata().getLabels())
        .endMetadata()
        .withSpec(ds.getSpec().getTemplate().getSpec())
        .build();
  }

  private static void dryRunCreate(Pod pod) {
    admin.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).dryRun().create();
  }

  @Test
  void theNamespaceTheOperatorCreatesAdmitsTheNodePluginThatBaselineRefuses() {
    StorageClusterLifecycleIT.create(Specs.cluster("lambda"));
    Namespace ns = admin.namespaces().withName("soko-lambda").get();
    assertThat(ns.getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "privileged")
        .containsEntry("pod-security.kubernetes.io/audit", "privileged")
        .containsEntry("pod-security.kubernetes.io/warn", "privileged");
    DaemonSet ds = StorageClusterLifecycleIT.daemonSet("lambda");

    dryRunCreate(nodePluginPod(ds, "soko-lambda"));

    // The same pod where the cluster's baseline level applies: what Soko's labels prevent.
    admin
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName("psa-baseline")
                .addToLabels("pod-security.kubernetes.io/enforce", "baseline")
                .endMetadata()
                .build())
        .create();
    try {
      admin
          .serviceAccounts()
          .inNamespace("psa-baseline")
          .resource(
              new ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName(ds.getSpec().getTemplate().getSpec().getServiceAccountName())
                  .endMetadata()
                  .build())
          .create();
      assertThatThrownBy(() -> dryRunCreate(nodePluginPod(ds, "psa-baseline")))
          .isInstanceOf(KubernetesClientException.class)
          .hasMessageContaining("violates PodSecurity \"baseline:latest\"")
          .hasMessageContaining("privileged");
    } finally {
      admin.namespaces().withName("psa-baseline").delete();
    }
  }

  @Test
  void aNamespaceTheOperatorDidNotCreateKeepsItsLabelsAndOutlivesTheStorageCluster() {
    admin
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName("soko-mu")
                .addToLabels("pod-security.kubernetes.io/enforce", "baseline")
                .addToLabels("team", "storage")
                .endMetadata()
                .build())
        .create();
    try {
      StorageCluster sc = StorageClusterLifecycleIT.create(Specs.cluster("mu"));
      assertThat(StorageClusterLifecycleIT.daemonSet("mu")).isNotNull();
      Namespace ns = admin.namespaces().withName("soko-mu").get();
      assertThat(ns.getMetadata().getLabels())
          .containsAllEntriesOf(
              Map.of("pod-security.kubernetes.io/enforce", "baseline", "team", "storage"))
          .doesNotContainKeys(
              "soko.dev/storagecluster",
              "pod-security.kubernetes.io/warn",
              "pod-security.kubernetes.io/audit");
      assertThat(ns.getMetadata().getOwnerReferences()).isNullOrEmpty();
      assertThat(ns.getMetadata().getManagedFields())
          .noneMatch(f -> "soko-operator".equals(f.getManager()));
      assertThat(StorageClusterLifecycleIT.condition(sc, "Degraded").getMessage())
          .contains(
              "namespace soko-mu was not created by Soko",
              "level 'baseline'",
              "label it pod-security.kubernetes.io/enforce=privileged");

      admin.resources(StorageCluster.class).withName("mu").delete();
      Await.until("mu gone", () -> cluster.get("mu") == null, gone -> gone);
      assertThat(admin.apps().daemonSets().inNamespace("soko-mu").list().getItems()).isEmpty();
      Namespace after = admin.namespaces().withName("soko-mu").get();
      assertThat(after).isNotNull();
      assertThat(after.getMetadata().getDeletionTimestamp()).isNull();
    } finally {
      admin.namespaces().withName("soko-mu").delete();
    }
  }
}

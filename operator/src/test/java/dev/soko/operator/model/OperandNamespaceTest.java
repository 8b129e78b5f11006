package dev.soko.operator.model;

import static dev.soko.operator.model.Fixtures.desired;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Namespace;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The namespace Soko creates, with its Pod Security labels, and one it did not create. */
class OperandNamespaceTest {
  private final VersionsTable table = VersionsTable.load();

  @Test
  void theNamespaceSokoCreatesLetsPodSecurityAdmitTheNodePlugin() {
    DesiredState d = desired(Fixtures.sample(), "1.34");
    assertThat(d.all().get(0)).isSameAs(d.namespace());
    assertThat(d.namespace().getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "privileged")
        .containsEntry("pod-security.kubernetes.io/audit", "privileged")
        .containsEntry("pod-security.kubernetes.io/warn", "privileged")
        .containsEntry(Names.LABEL_CLUSTER, "fast")
        .doesNotContainKeys(
            "pod-security.kubernetes.io/enforce-version",
            "pod-security.kubernetes.io/audit-version",
            "pod-security.kubernetes.io/warn-version");
  }

  @Test
  void aNamespaceSokoDidNotCreateIsNeitherAppliedNorLabelledAndStatusSaysWhatItNeeds() {
    KubernetesVersion v = KubernetesVersion.parse("1.34");
    ClusterFacts baseline =
        new ClusterFacts(
            v,
            Set.of(),
            false,
            null,
            null,
            null,
            new ClusterFacts.ForeignNamespace("soko-fast", "baseline"));
    DesiredState d = DesiredState.of(Fixtures.sample(), table, baseline);
    assertThat(d.namespace()).isNull();
    assertThat(d.all()).noneMatch(o -> o instanceof Namespace);
    assertThat(d.nodeDaemonSet().getMetadata().getNamespace()).isEqualTo("soko-fast");
    assertThat(d.notices())
        .anyMatch(
            n ->
                n.contains("namespace soko-fast was not created by Soko")
                    && n.contains("level 'baseline'")
                    && n.contains("label it pod-security.kubernetes.io/enforce=privileged"));

    ClusterFacts unlabelled =
        new ClusterFacts(
            v,
            Set.of(),
            false,
            null,
            null,
            null,
            new ClusterFacts.ForeignNamespace("soko-fast", null));
    assertThat(DesiredState.of(Fixtures.sample(), table, unlabelled).notices())
        .anyMatch(n -> n.contains("the cluster's default Pod Security level applies"));
    ClusterFacts privileged =
        new ClusterFacts(
            v,
            Set.of(),
            false,
            null,
            null,
            null,
            new ClusterFacts.ForeignNamespace("soko-fast", "privileged"));
    assertThat(DesiredState.of(Fixtures.sample(), table, privileged).notices())
        .noneMatch(n -> n.contains("namespace soko-fast"));
  }
}

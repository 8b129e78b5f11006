package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.BackendFactCases;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CRD's CEL rules on backends and filesystems answer as the driver's table of backends does, on
 * the real API server: the cases of {@link BackendFactCases}, which the operator's own checks
 * answer alike (BackendFactsTest).
 */
class BackendFactsIT {
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
  }

  static List<BackendFactCases.Case> cases() {
    return BackendFactCases.all();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void admissionAnswersAsTheTable(BackendFactCases.Case c) {
    StorageCluster sc = new StorageCluster();
    sc.setMetadata(new ObjectMetaBuilder().withName("backend-facts").build());
    sc.setSpec(c.spec());
    if (c.allowed()) {
      assertThat(cluster.admin.resource(sc).dryRun().create()).isNotNull();
    } else {
      assertThatThrownBy(() -> cluster.admin.resource(sc).dryRun().create())
          .isInstanceOf(KubernetesClientException.class)
          .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
          .hasMessageContaining("fsType");
    }
  }
}

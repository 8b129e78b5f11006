package dev.soko.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A tier on the real local cluster (hack/e2e-node.sh): its tests run in order on one cluster, each
 * building on the last; a failure leaves every component's logs ({@link FailureReport}). The tier
 * is connected before its own {@code @BeforeAll} runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(FailureReport.class)
abstract class RealClusterTier {
  private final String appsNamespace;

  LocalCluster cluster;
  KubernetesClient client;

  /** The tier's workloads, in its own namespace. */
  Workloads apps;

  /** The default installation, as the tier's tests look at it. */
  Installed installed;

  /**
   * @param appsNamespace the namespace of the tier's own pods and claims
   */
  RealClusterTier(String appsNamespace) {
    this.appsNamespace = appsNamespace;
  }

  @BeforeAll
  final void connect() throws Exception {
    cluster = LocalCluster.fromEnvironment();
    client = cluster.client();
    apps = new Workloads(client, appsNamespace, cluster.imageRegistry);
    installed = new Installed(client);
  }

  @AfterAll
  final void disconnect() {
    if (client != null) {
      client.close();
    }
  }
}

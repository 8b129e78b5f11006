package dev.soko.operator.model;

import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;
import java.util.Set;

/** Test StorageClusters and what the model makes of them. */
public final class Fixtures {
  private static final VersionsTable TABLE = VersionsTable.load();

  private Fixtures() {}

  /** A fresh copy of test resource storagecluster-sample.yaml. */
  public static StorageCluster sample() {
    InputStream in = Fixtures.class.getResourceAsStream("/storagecluster-sample.yaml");
    return Serialization.unmarshal(in, StorageCluster.class);
  }

  /** The sample with driver.registration Sidecars. */
  public static StorageCluster sidecars() {
    StorageCluster sc = sample();
    sc.getSpec().getDriver().setRegistration(Registration.Sidecars);
    return sc;
  }

  /**
   * Facts of a cluster of that version that serves only these optional APIs, with nothing of anyone
   * else's in the way.
   */
  public static ClusterFacts serving(String version, Set<String> apis) {
    return new ClusterFacts(KubernetesVersion.parse(version), apis, true, null, null, null, null);
  }

  /** The shipped table's desired state for a Kubernetes version, offline. */
  static DesiredState desired(StorageCluster sc, String version) {
    return DesiredState.of(sc, TABLE, ClusterFacts.offline(KubernetesVersion.parse(version)));
  }

  static PodSpec nodePod(DesiredState d) {
    return d.nodeDaemonSet().getSpec().getTemplate().getSpec();
  }

  static PodSpec controllerPod(DesiredState d) {
    return d.controllerDeployment().getSpec().getTemplate().getSpec();
  }

  static Container container(PodSpec pod, String name) {
    return pod.getContainers().stream()
        .filter(c -> c.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container " + name));
  }
}

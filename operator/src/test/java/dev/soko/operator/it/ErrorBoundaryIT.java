package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.LogLevel;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The error boundary on the real API server: an apply that admission refuses takes Ready away, puts
 * the server's message in Degraded and records a Warning event; lifting the refusal heals the
 * installation without anyone touching it.
 */
class ErrorBoundaryIT {
  private static final String DENIAL = "node plugins are not allowed on this cluster";

  static TestCluster cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    StorageClusterLifecycleIT.start();
    cluster = TestCluster.get();
    admin = cluster.admin;
  }

  @Test
  void aDeniedDaemonSetIsDegradedWithTheServersMessageUntilThePolicyIsLifted() {
    StorageCluster created = StorageClusterLifecycleIT.create(Specs.cluster("nu"));
    makeReady("nu");
    Await.until(
        "nu ready",
        () -> cluster.get("nu"),
        s -> "True".equals(StorageClusterLifecycleIT.condition(s, "Ready").getStatus()));

    List<HasMetadata> policy = denyDaemonSet("nu-node");
    try {
      // A spec change the node DaemonSet must follow; admission refuses the apply.
      StorageCluster sc = cluster.get("nu");
      sc.getSpec().getDriver().setLogLevel(LogLevel.debug);
      admin.resource(sc).update();
      StorageCluster degraded =
          Await.until(
              "nu degraded",
              () -> cluster.get("nu"),
              s -> "True".equals(StorageClusterLifecycleIT.condition(s, "Degraded").getStatus()));
      var condition = StorageClusterLifecycleIT.condition(degraded, "Degraded");
      assertThat(condition.getReason()).isEqualTo("AdmissionDenied");
      assertThat(condition.getMessage())
          .contains("apply of DaemonSet soko-nu/nu-node refused")
          .contains(DENIAL);
      assertThat(StorageClusterLifecycleIT.condition(degraded, "Ready").getStatus())
          .isEqualTo("False");
      assertThat(degraded.getStatus().getObservedGeneration())
          .isEqualTo(degraded.getMetadata().getGeneration());
      Event warning =
          Await.until(
              "a Warning event",
              () ->
                  admin.v1().events().inNamespace("default").list().getItems().stream()
                      .filter(e -> "nu".equals(e.getInvolvedObject().getName()))
                      .filter(e -> "AdmissionDenied".equals(e.getReason()))
                      .findFirst()
                      .orElse(null),
              e -> e != null);
      assertThat(warning.getType()).isEqualTo("Warning");
      assertThat(warning.getMessage()).contains(DENIAL);
      assertThat(created.getMetadata().getUid()).isEqualTo(warning.getInvolvedObject().getUid());
    } finally {
      policy.forEach(o -> admin.resource(o).delete());
    }

    // Nothing but the operator's own retry brings the change in once the policy is gone.
    StorageCluster healed =
        Await.until(
            "nu healed",
            java.time.Duration.ofSeconds(90),
            () -> cluster.get("nu"),
            s ->
                "False".equals(StorageClusterLifecycleIT.condition(s, "Degraded").getStatus())
                    && "True".equals(StorageClusterLifecycleIT.condition(s, "Ready").getStatus()));
    assertThat(healed.getStatus().getAppliedObjects()).isPositive();
    assertThat(
            StorageClusterLifecycleIT.daemonSet("nu")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getArgs())
        .contains("--log-level=debug");
  }

  /** What kubelet, the DaemonSet controller and the controller's pods would report. */
  private static void makeReady(String name) {
    DaemonSet ds = StorageClusterLifecycleIT.daemonSet(name);
    ds.setStatus(
        new DaemonSetStatusBuilder()
            .withDesiredNumberScheduled(1)
            .withNumberReady(1)
            .withCurrentNumberScheduled(1)
            .withNumberMisscheduled(0)
            .build());
    admin.resource(ds).updateStatus();
    var dep =
        admin.apps().deployments().inNamespace("soko-" + name).withName(name + "-controller").get();
    dep.setStatus(new DeploymentStatusBuilder().withReplicas(1).withReadyReplicas(1).build());
    admin.resource(dep).updateStatus();
    StorageClusterLifecycleIT.nodePod(name, "node-" + name, true);
    StorageClusterLifecycleIT.register(name, "node-" + name);
  }

  /**
   * A ValidatingAdmissionPolicy and its binding that refuse any change to one DaemonSet, returned
   * once the API server enforces them.
   */
  private static List<HasMetadata> denyDaemonSet(String name) {
    String yaml =
        """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {name: deny-%1$s}
        spec:
          failurePolicy: Fail
          matchConstraints:
            resourceRules:
              - apiGroups: [apps]
                apiVersions: [v1]
                operations: [CREATE, UPDATE]
                resources: [daemonsets]
          validations:
            - expression: "object.metadata.name != '%1$s'"
              message: "%2$s"
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata: {name: deny-%1$s}
        spec:
          policyName: deny-%1$s
          validationActions: [Deny]
        """
            .formatted(name, DENIAL);
    List<HasMetadata> objects =
        admin.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
    objects.forEach(o -> admin.resource(o).create());
    String namespace = "soko-" + name.substring(0, name.indexOf('-'));
    Await.until(
        "the policy is enforced",
        () -> {
          DaemonSet ds = admin.apps().daemonSets().inNamespace(namespace).withName(name).get();
          ds.getMetadata().getLabels().put("example.com/probe", "x");
          try {
            admin.resource(ds).dryRun().update();
            return false;
          } catch (KubernetesClientException e) {
            return e.getMessage().contains(DENIAL);
          }
        },
        denied -> denied);
    return objects;
  }
}

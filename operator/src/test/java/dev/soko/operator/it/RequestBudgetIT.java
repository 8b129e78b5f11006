package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.micrometer.core.instrument.Counter;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a reconcile costs the API server, counted by the operator's own client (watches and
 * leader-election leases excepted): a no-op reconcile reads from the informers' caches and writes
 * nothing; a registration change costs its status patch.
 */
class RequestBudgetIT {
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    StorageClusterLifecycleIT.start();
    cluster = TestCluster.get();
  }

  @Test
  void noOpReconcileMakesAtMostFiveRequestsAndNoWrite() throws Exception {
    StorageClusterLifecycleIT.create(Specs.cluster("kappa"));
    settle();
    long requests = cluster.operator.apiCalls();
    long writes = cluster.operator.writeCalls();
    // Read before the edit: the reconcile it triggers may finish before the edit call returns.
    long reconciles = cluster.operator.reconciles();
    // A label edit on an owned object that is not ours to manage triggers a full reconcile.
    cluster
        .admin
        .serviceAccounts()
        .inNamespace("soko-kappa")
        .withName("kappa-node")
        .edit(
            sa -> {
              sa.getMetadata().getLabels().put("example.com/unrelated", "x");
              return sa;
            });
    Await.until("a resync reconcile", cluster.operator::reconciles, c -> c > reconciles);
    Thread.sleep(1000);
    long made = cluster.operator.apiCalls() - requests;
    System.out.printf(
        "no-op reconcile: %d reconcile(s), %d request(s), %d write(s)%n",
        cluster.operator.reconciles() - reconciles, made, cluster.operator.writeCalls() - writes);
    assertThat(cluster.operator.writeCalls() - writes).isZero();
    assertThat(made).isLessThanOrEqualTo(5);
  }

  @Test
  void aNodeRegistrationCostsOneStatusPatch() throws Exception {
    StorageClusterLifecycleIT.create(Specs.cluster("omicron"));
    settle();
    long requests = cluster.operator.apiCalls();
    long writes = cluster.operator.writeCalls();
    cluster
        .admin
        .storage()
        .v1()
        .csiNodes()
        .resource(
            new CSINodeBuilder()
                .withNewMetadata()
                .withName("node-omicron")
                .endMetadata()
                .withNewSpec()
                .addNewDriver()
                .withName("omicron.csi.soko.dev")
                .withNodeID("node-omicron")
                .endDriver()
                .endSpec()
                .build())
        .create();
    try {
      Await.until(
          "node-omicron registered",
          () -> cluster.get("omicron"),
          s -> s.getStatus().getNodes().registered() == 1);
      settle();
      long made = cluster.operator.apiCalls() - requests;
      long wrote = cluster.operator.writeCalls() - writes;
      System.out.printf("registration change: %d request(s), %d write(s)%n", made, wrote);
      assertThat(wrote).isEqualTo(1);
      assertThat(made).isLessThanOrEqualTo(5);
    } finally {
      cluster.admin.storage().v1().csiNodes().withName("node-omicron").delete();
    }
  }

  @Test
  void aSpecChangeCostsItsApplyAndTheStatusPatch() throws Exception {
    StorageClusterLifecycleIT.create(Specs.cluster("xi"));
    settle();
    long requests = cluster.operator.apiCalls();
    long writes = cluster.operator.writeCalls();
    var sc = cluster.get("xi");
    sc.getSpec().getController().setReplicas(2);
    cluster.admin.resource(sc).update();
    Await.until(
        "xi observed",
        () -> cluster.get("xi"),
        s -> s.getMetadata().getGeneration().equals(s.getStatus().getObservedGeneration()));
    settle();
    long made = cluster.operator.apiCalls() - requests;
    long wrote = cluster.operator.writeCalls() - writes;
    System.out.printf("spec change: %d request(s), %d write(s)%n", made, wrote);
    // The controller Deployment's apply and the status patch; no read.
    assertThat(made).isEqualTo(wrote);
    assertThat(wrote).isBetween(2L, 3L);
  }

  @Test
  void aChangeThatArrivesDuringAReconcileIsReconciledWithoutAConflict() throws Exception {
    StorageClusterLifecycleIT.create(Specs.cluster("rho"));
    settle();
    double errors = reconcileErrors();
    List<String> nodes = List.of("node-rho-a", "node-rho-b");
    for (int round = 0; round < 10; round++) {
      // Two writes in a row: the second's event arrives while the first's reconcile runs, so the
      // next reconcile starts as soon as that one has patched the status, before the watch has
      // brought the patched StorageCluster. It must not patch from the version before.
      nodes.forEach(n -> cluster.admin.storage().v1().csiNodes().resource(csiNode(n)).create());
      Await.until(
          "both nodes registered",
          () -> cluster.get("rho"),
          s -> s.getStatus().getNodes().registered() == 2);
      nodes.forEach(n -> cluster.admin.storage().v1().csiNodes().withName(n).delete());
      Await.until(
          "both registrations gone",
          () -> cluster.get("rho"),
          s -> s.getStatus().getNodes().registered() == 0);
    }
    settle();
    // A patch from the stale version met 409 Conflict: a failed reconcile, retried 2 s later.
    assertThat(reconcileErrors() - errors).isZero();
  }

  private static io.fabric8.kubernetes.api.model.storage.CSINode csiNode(String name) {
    return new CSINodeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .addNewDriver()
        .withName("rho.csi.soko.dev")
        .withNodeID(name)
        .endDriver()
        .endSpec()
        .build();
  }

  private static double reconcileErrors() {
    return cluster.operator.registry().find("soko.operator.reconcile.errors").counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  /** Waits until the operator has made no call for 1.5 s (its own writes' echoes are handled). */
  private static void settle() throws InterruptedException {
    long settled = cluster.operator.apiCalls();
    long deadline = System.currentTimeMillis() + 20_000;
    while (System.currentTimeMillis() < deadline) {
      Thread.sleep(1500);
      long now = cluster.operator.apiCalls();
      if (now == settled) {
        return;
      }
      settled = now;
    }
  }
}

package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.UninstallPolicy;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Create, update, drift, delete and PV protection against a real kube-apiserver. */
class StorageClusterLifecycleIT {
  static TestCluster cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
    admin = cluster.admin;
  }

  static StorageCluster create(StorageCluster sc) {
    admin.resource(sc).create();
    String name = sc.getMetadata().getName();
    return Await.until(
        name + " applied",
        () -> cluster.get(name),
        s ->
            s.getStatus() != null
                && s.getStatus().getAppliedObjects() != null
                && s.getMetadata().getGeneration().equals(s.getStatus().getObservedGeneration()));
  }

  static Condition condition(StorageCluster sc, String type) {
    return sc.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no condition " + type + " in " + sc.getStatus()));
  }

  static DaemonSet daemonSet(String name) {
    return admin.apps().daemonSets().inNamespace("soko-" + name).withName(name + "-node").get();
  }

  /**
   * A node plugin pod on {@code node} as the DaemonSet controller and kubelet would make it (this
   * API server runs neither), ready or not.
   */
  static io.fabric8.kubernetes.api.model.Pod nodePod(String cluster, String node, boolean ready) {
    return nodePod(cluster, node, ready ? null : "CrashLoopBackOff");
  }

  /** As above; {@code waiting} is the driver container's waiting reason, null when ready. */
  static io.fabric8.kubernetes.api.model.Pod nodePod(String cluster, String node, String waiting) {
    boolean ready = waiting == null;
    DaemonSet ds = daemonSet(cluster);
    var pod =
        new io.fabric8.kubernetes.api.model.PodBuilder()
            .withNewMetadata()
            .withName(cluster + "-node-" + node)
            .withNamespace("soko-" + cluster)
            .withLabels(ds.getSpec().getTemplate().getMetadata().getLabels())
            .endMetadata()
            .withNewSpec()
            .withNodeName(node)
            .withServiceAccountName(cluster + "-node")
            .withAutomountServiceAccountToken(false)
            .addNewContainer()
            .withName("soko-driver")
            .withImage("registry.example/soko-driver:test")
            .endContainer()
            .endSpec()
            .build();
    var created = admin.resource(pod).create();
    created.setStatus(
        new io.fabric8.kubernetes.api.model.PodStatusBuilder()
            .withPhase("Running")
            .addNewCondition()
            .withType("Ready")
            .withStatus(ready ? "True" : "False")
            .endCondition()
            .addNewContainerStatus()
            .withName("soko-driver")
            .withImage("registry.example/soko-driver:test")
            .withImageID("")
            .withReady(ready)
            .withRestartCount(ready ? 0 : 6)
            .withNewState()
            .withNewWaiting()
            .withReason(waiting)
            .endWaiting()
            .endState()
            .endContainerStatus()
            .build());
    if (ready) {
      created
          .getStatus()
          .getContainerStatuses()
          .get(0)
          .setState(
              new io.fabric8.kubernetes.api.model.ContainerStateBuilder()
                  .withNewRunning()
                  .withStartedAt("2026-01-01T00:00:00Z")
                  .endRunning()
                  .build());
    }
    return admin.resource(created).updateStatus();
  }

  /** The CSINode the kubelet writes once the node plugin on {@code node} registered. */
  static void register(String cluster, String node) {
    admin
        .storage()
        .v1()
        .csiNodes()
        .resource(
            new io.fabric8.kubernetes.api.model.storage.CSINodeBuilder()
                .withNewMetadata()
                .withName(node)
                .endMetadata()
                .withNewSpec()
                .addNewDriver()
                .withName(cluster + ".csi.soko.dev")
                .withNodeID(node)
                .withTopologyKeys("topology.soko.dev/node")
                .endDriver()
                .endSpec()
                .build())
        .create();
  }

  /**
   * The data path's CA and the components' certificates, written by the operator under its own
   * RBAC; each driver container that gets the data path mounts its component's Secret, never the
   * CA's.
   */
  static void dataTlsSecretsAndMounts(String name, DaemonSet ds) {
    String ns = "soko-" + name;
    Secret ca = admin.secrets().inNamespace(ns).withName(name + "-data-ca").get();
    assertThat(ca.getType()).isEqualTo("Opaque");
    assertThat(ca.getData()).containsOnlyKeys("ca.crt", "ca.key");
    assertThat(ca.getMetadata().getOwnerReferences())
        .extracting(r -> r.getKind() + "/" + r.getName())
        .containsExactly("StorageCluster/" + name);
    var controller =
        admin.apps().deployments().inNamespace(ns).withName(name + "-controller").get();
    Map<String, PodSpec> pods =
        Map.of(
            "node", ds.getSpec().getTemplate().getSpec(),
            "controller", controller.getSpec().getTemplate().getSpec());
    pods.forEach(
        (component, pod) -> {
          Secret tls =
              admin.secrets().inNamespace(ns).withName(name + "-" + component + "-data-tls").get();
          assertThat(tls.getType()).isEqualTo("kubernetes.io/tls");
          assertThat(tls.getData()).containsOnlyKeys("tls.crt", "tls.key", "ca.crt");
          Container driver =
              pod.getContainers().stream()
                  .filter(c -> c.getName().equals("soko-driver"))
                  .findFirst()
                  .orElseThrow();
          List<String> secretVolumes =
              pod.getVolumes().stream()
                  .filter(v -> v.getSecret() != null)
                  .map(v -> v.getSecret().getSecretName())
                  .toList();
          if (driver.getArgs().contains("--data-tls-dir=/etc/soko/data-tls")) {
            assertThat(secretVolumes).containsExactly(tls.getMetadata().getName());
            assertThat(driver.getVolumeMounts())
                .anyMatch(m -> m.getMountPath().equals("/etc/soko/data-tls") && m.getReadOnly());
          } else {
            assertThat(secretVolumes).isEmpty();
          }
        });
  }

  @Test
  void createProducesEveryObjectAndAccurateStatus() {
    StorageCluster sc = create(Specs.cluster("alpha"));
    assertThat(admin.namespaces().withName("soko-alpha").get()).isNotNull();
    assertThat(admin.serviceAccounts().inNamespace("soko-alpha").withName("alpha-node").get())
        .isNotNull();
    assertThat(admin.rbac().clusterRoles().withName("soko:alpha:provisioner").get()).isNotNull();
    assertThat(admin.rbac().clusterRoleBindings().withName("soko:alpha:resizer").get()).isNotNull();
    assertThat(admin.rbac().roles().inNamespace("soko-alpha").withName("alpha-capacity").get())
        .isNotNull();
    var driver = admin.storage().v1().csiDrivers().withName("alpha.csi.soko.dev").get();
    assertThat(driver.getSpec().getAttachRequired()).isFalse();
    assertThat(driver.getSpec().getStorageCapacity()).isTrue();
    DaemonSet ds = daemonSet("alpha");
    // Built-in registration, the default: no registrar or livenessprobe container or image.
    assertThat(ds.getSpec().getTemplate().getSpec().getContainers())
        .extracting(Container::getName)
        .contains("soko-driver", "csi-provisioner")
        .doesNotContain("node-driver-registrar", "liveness-probe");
    assertThat(sc.getStatus().getRegistration()).isEqualTo(Registration.BuiltIn);
    assertThat(sc.getStatus().getImages())
        .doesNotContainKeys("node-driver-registrar", "liveness-probe");
    assertThat(
            admin
                .apps()
                .deployments()
                .inNamespace("soko-alpha")
                .withName("alpha-controller")
                .get()
                .getSpec()
                .getReplicas())
        .isEqualTo(1);
    dataTlsSecretsAndMounts("alpha", ds);
    var sclass = admin.storage().v1().storageClasses().withName("alpha-sc").get();
    assertThat(sclass.getProvisioner()).isEqualTo("alpha.csi.soko.dev");
    assertThat(sclass.getVolumeBindingMode()).isEqualTo("WaitForFirstConsumer");

    assertThat(sc.getStatus().getKubernetesVersion()).isEqualTo("v1.36.3");
    assertThat(sc.getStatus().getImages().get("csi-provisioner"))
        .startsWith(TestCluster.DEFAULT_IMAGE_REGISTRY + "/sig-storage/csi-provisioner:");
    assertThat(sc.getStatus().getImages().get("soko-driver"))
        .startsWith(TestCluster.DEFAULT_IMAGE_REGISTRY + "/soko-driver:");
    assertThat(condition(sc, "Degraded").getStatus()).isEqualTo("False");
    assertThat(condition(sc, "Ready").getStatus()).isEqualTo("False");
    // No snapshot CRDs on this API server: snapshots stay off and Compatible says why.
    assertThat(condition(sc, "Compatible").getStatus()).isEqualTo("False");
    assertThat(condition(sc, "Compatible").getMessage()).contains("snapshot.storage.k8s.io/v1");
    assertThat(ds.getSpec().getTemplate().getSpec().getContainers())
        .extracting(Container::getName)
        .doesNotContain("csi-snapshotter");
    // Nor changed block tracking, and the status says why.
    assertThat(sc.getStatus().getChangedBlockTracking().running()).isFalse();
    assertThat(sc.getStatus().getChangedBlockTracking().reason()).isEqualTo("SnapshotsDisabled");
    assertThat(sc.getStatus().getImages()).doesNotContainKey("csi-snapshot-metadata");
    assertThat(sc.getStatus().getController().ready()).isZero();

    // What kubelet, the DaemonSet controller and the provisioner would report.
    register("alpha", "node-1");
    admin
        .storage()
        .v1()
        .csiStorageCapacities()
        .inNamespace("soko-alpha")
        .resource(
            new io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder()
                .withNewMetadata()
                .withName("cap-1")
                .withNamespace("soko-alpha")
                // What the external-provisioner puts on the objects it publishes.
                .addToLabels("csi.storage.k8s.io/drivername", "alpha.csi.soko.dev")
                .endMetadata()
                .withStorageClassName("alpha-sc")
                .withNewNodeTopology()
                .addToMatchLabels("topology.soko.dev/node", "node-1")
                .endNodeTopology()
                .withNewCapacity("4Gi")
                .build())
        .create();
    ds.setStatus(
        new io.fabric8.kubernetes.api.model.apps.DaemonSetStatusBuilder()
            .withDesiredNumberScheduled(1)
            .withNumberReady(1)
            .withCurrentNumberScheduled(1)
            .withNumberMisscheduled(0)
            .build());
    admin.resource(ds).updateStatus();
    var dep =
        admin.apps().deployments().inNamespace("soko-alpha").withName("alpha-controller").get();
    dep.setStatus(
        new io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder()
            .withReplicas(1)
            .withReadyReplicas(1)
            .build());
    admin.resource(dep).updateStatus();
    nodePod("alpha", "node-1", true);

    StorageCluster ready =
        Await.until(
            "alpha ready",
            () -> cluster.get("alpha"),
            s ->
                "True".equals(condition(s, "Ready").getStatus())
                    && s.getStatus().getNodes().registered() == 1
                    && !s.getStatus().getPools().isEmpty());
    assertThat(ready.getStatus().getNodes().desired()).isEqualTo(1);
    assertThat(ready.getStatus().getPools().get(0).node()).isEqualTo("node-1");
    assertThat(ready.getStatus().getPools().get(0).available()).isEqualTo("4Gi");
    assertThat(ready.getStatus().getCapacity().total()).isEqualTo("10Gi");
    assertThat(ready.getStatus().getCapacity().used()).isEqualTo("6Gi");

    // Registration and capacity changes alone (no owned object changes, resync is 10 minutes
    // away) reach the status through the CSINode and CSIStorageCapacity watches.
    register("alpha", "node-2");
    Await.until(
        "node-2 registered",
        () -> cluster.get("alpha"),
        s -> s.getStatus().getNodes().registered() == 2);
    admin
        .storage()
        .v1()
        .csiStorageCapacities()
        .inNamespace("soko-alpha")
        .withName("cap-1")
        .edit(
            c -> {
              c.setCapacity(new io.fabric8.kubernetes.api.model.Quantity("1Gi"));
              return c;
            });
    StorageCluster fuller =
        Await.until(
            "capacity follows",
            () -> cluster.get("alpha"),
            s -> "1Gi".equals(s.getStatus().getPools().get(0).available()));
    assertThat(fuller.getStatus().getCapacity().used()).isEqualTo("9Gi");
    admin.storage().v1().csiNodes().withName("node-2").delete();
    Await.until(
        "node-2 unregistered",
        () -> cluster.get("alpha"),
        s -> s.getStatus().getNodes().registered() == 1);
  }

  @Test
  void specUpdatesAreFollowedAndHandEditsReverted() {
    create(Specs.cluster("beta"));
    StorageCluster sc = cluster.get("beta");
    sc.getSpec().getController().setReplicas(3);
    sc.getSpec().getDriver().setLogLevel(dev.soko.api.v1alpha1.LogLevel.debug);
    admin.resource(sc).update();
    Await.until(
        "replicas 3",
        () -> admin.apps().deployments().inNamespace("soko-beta").withName("beta-controller").get(),
        d -> d.getSpec().getReplicas() == 3);
    Await.until(
        "debug logs",
        () -> daemonSet("beta"),
        d ->
            d.getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getArgs()
                .contains("--log-level=debug"));

    // Hand edits: a changed StorageClass-owned CSIDriver field and a deleted ClusterRole come back.
    admin
        .apps()
        .deployments()
        .inNamespace("soko-beta")
        .withName("beta-controller")
        .edit(
            d -> {
              d.getSpec().setReplicas(7);
              return d;
            });
    Await.until(
        "replicas reverted",
        () -> admin.apps().deployments().inNamespace("soko-beta").withName("beta-controller").get(),
        d -> d.getSpec().getReplicas() == 3);
    admin.rbac().clusterRoles().withName("soko:beta:resizer").delete();
    Await.until(
        "cluster role recreated",
        () -> admin.rbac().clusterRoles().withName("soko:beta:resizer").get(),
        r -> r != null);
    // A deleted certificate is issued anew, by the CA that is still there.
    var ca = admin.secrets().inNamespace("soko-beta").withName("beta-data-ca").get();
    admin.secrets().inNamespace("soko-beta").withName("beta-node-data-tls").delete();
    Secret reissued =
        Await.until(
            "node certificate reissued",
            () -> admin.secrets().inNamespace("soko-beta").withName("beta-node-data-tls").get(),
            t -> t != null);
    assertThat(reissued.getData().get("ca.crt")).isEqualTo(ca.getData().get("ca.crt"));
  }

  @Test
  void deleteRemovesEverythingUnlessVolumesExist() {
    create(Specs.cluster("gamma"));
    admin
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pv-gamma")
                .endMetadata()
                .withNewSpec()
                .withCapacity(
                    Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withNewCsi()
                .withDriver("gamma.csi.soko.dev")
                .withVolumeHandle("v1")
                .endCsi()
                .endSpec()
                .build())
        .create();
    admin.resources(StorageCluster.class).withName("gamma").delete();
    StorageCluster blocked =
        Await.until(
            "deletion blocked",
            () -> cluster.get("gamma"),
            s -> "DeletionBlocked".equals(condition(s, "Degraded").getReason()));
    assertThat(condition(blocked, "Degraded").getMessage()).contains("pv-gamma").contains("Force");
    assertThat(admin.storage().v1().csiDrivers().withName("gamma.csi.soko.dev").get()).isNotNull();

    // No controller-manager here: drop the pv-protection finalizer ourselves, then delete.
    admin
        .persistentVolumes()
        .withName("pv-gamma")
        .edit(
            pv -> {
              pv.getMetadata().setFinalizers(null);
              return pv;
            });
    admin.persistentVolumes().withName("pv-gamma").delete();
    Await.until(
        "gamma gone",
        java.time.Duration.ofSeconds(60),
        () -> cluster.get("gamma") == null,
        gone -> gone);
    assertThat(admin.storage().v1().csiDrivers().withName("gamma.csi.soko.dev").get()).isNull();
    assertThat(admin.storage().v1().storageClasses().withName("gamma-sc").get()).isNull();
    assertThat(
            admin
                .rbac()
                .clusterRoles()
                .withLabel("soko.dev/storagecluster", "gamma")
                .list()
                .getItems())
        .isEmpty();
    assertThat(admin.apps().daemonSets().inNamespace("soko-gamma").list().getItems()).isEmpty();
    assertThat(
            admin
                .secrets()
                .inNamespace("soko-gamma")
                .withLabel("soko.dev/storagecluster", "gamma")
                .list()
                .getItems())
        .isEmpty();
    var ns = admin.namespaces().withName("soko-gamma").get();
    assertThat(ns == null || ns.getMetadata().getDeletionTimestamp() != null).isTrue();
  }

  @Test
  void forcePolicyUninstallsDespiteVolumes() {
    StorageCluster spec = Specs.cluster("delta");
    spec.getSpec().setUninstallPolicy(UninstallPolicy.Force);
    create(spec);
    admin
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pv-delta")
                .endMetadata()
                .withNewSpec()
                .withCapacity(
                    Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withNewCsi()
                .withDriver("delta.csi.soko.dev")
                .withVolumeHandle("v1")
                .endCsi()
                .endSpec()
                .build())
        .create();
    admin.resources(StorageCluster.class).withName("delta").delete();
    Await.until("delta gone", () -> cluster.get("delta") == null, gone -> gone);
    assertThat(admin.storage().v1().csiDrivers().withName("delta.csi.soko.dev").get()).isNull();
  }

  @Test
  void csiDriverWithChangedImmutableFieldIsRecreated() {
    create(Specs.cluster("eps"));
    var old = admin.storage().v1().csiDrivers().withName("eps.csi.soko.dev").get();
    // Simulate a CSIDriver written by an older Soko with another immutable value. The operator
    // watches CSIDrivers and may recreate its own between our delete and create: then again.
    var older =
        new CSIDriverBuilder()
            .withMetadata(
                new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
                    .withName("eps.csi.soko.dev")
                    .withLabels(old.getMetadata().getLabels())
                    .build())
            .withNewSpec()
            .withAttachRequired(true)
            .withPodInfoOnMount(false)
            .endSpec()
            .build();
    boolean replaced = false;
    for (int attempt = 0; attempt < 20 && !replaced; attempt++) {
      admin.storage().v1().csiDrivers().withName("eps.csi.soko.dev").delete();
      Await.until(
          "csidriver deleted",
          () -> admin.storage().v1().csiDrivers().withName("eps.csi.soko.dev").get(),
          d -> d == null || !d.getMetadata().getUid().equals(old.getMetadata().getUid()));
      try {
        admin.resource(older).create();
        replaced = true;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        assertThat(e.getCode()).as("only the operator's recreate may win the race").isEqualTo(409);
      }
    }
    assertThat(replaced).as("the older CSIDriver was written").isTrue();
    var fixed =
        Await.until(
            "csidriver recreated",
            () -> admin.storage().v1().csiDrivers().withName("eps.csi.soko.dev").get(),
            d -> d != null && Boolean.FALSE.equals(d.getSpec().getAttachRequired()));
    assertThat(fixed.getSpec().getPodInfoOnMount()).isTrue();
    assertThat(fixed.getMetadata().getUid()).isNotEqualTo(old.getMetadata().getUid());
  }
}

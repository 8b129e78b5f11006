package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.EncryptionMode;
import dev.soko.api.v1alpha1.EncryptionSpec;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import dev.soko.operator.model.KubernetesVersion;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Default-class respect, version change, driver-name conflict, a btrfs pool's render and a class
 * changed in a field the API server keeps immutable.
 */
class StorageClusterBehaviourIT {
  static TestCluster cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    StorageClusterLifecycleIT.start(); // its helpers are shared
    cluster = TestCluster.get();
    admin = cluster.admin;
  }

  @Test
  void userDefaultStorageClassIsNeverStolen() {
    admin
        .storage()
        .v1()
        .storageClasses()
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("users-default")
                .addToAnnotations("storageclass.kubernetes.io/is-default-class", "true")
                .endMetadata()
                .withProvisioner("example.com/other")
                .build())
        .create();
    try {
      StorageCluster sc = Specs.cluster("zeta");
      sc.getSpec().getStorageClasses().get(0).setDefaultClass(true);
      StorageClusterLifecycleIT.create(sc);
      var mine = admin.storage().v1().storageClasses().withName("zeta-sc").get();
      assertThat(mine.getMetadata().getAnnotations())
          .doesNotContainKey("storageclass.kubernetes.io/is-default-class");
      assertThat(
              admin
                  .storage()
                  .v1()
                  .storageClasses()
                  .withName("users-default")
                  .get()
                  .getMetadata()
                  .getAnnotations())
          .containsEntry("storageclass.kubernetes.io/is-default-class", "true");
    } finally {
      admin.storage().v1().storageClasses().withName("users-default").delete();
    }
    // Once the user's default is gone, Soko's requested default applies (after any resync).
    admin
        .apps()
        .deployments()
        .inNamespace("soko-zeta")
        .withName("zeta-controller")
        .edit(
            d -> {
              d.getSpec().setReplicas(5);
              return d;
            });
    Await.until(
        "zeta-sc default",
        () -> admin.storage().v1().storageClasses().withName("zeta-sc").get(),
        c ->
            "true"
                .equals(
                    c.getMetadata()
                        .getAnnotations()
                        .get("storageclass.kubernetes.io/is-default-class")));
  }

  @Test
  void simulatedClusterUpgradeChangesSidecars() {
    StorageCluster sc = Specs.cluster("eta");
    sc.getSpec().getSnapshots().setEnabled(false);
    StorageCluster created = StorageClusterLifecycleIT.create(sc);
    assertThat(StorageClusterLifecycleIT.condition(created, "Compatible").getStatus())
        .isEqualTo("True");
    assertThat(provisionerImage("eta")).endsWith(":v6.4.0");
    cluster.version.set(KubernetesVersion.parse("v1.30.4"));
    try {
      // An event on an owned object stands in for the periodic resync that notices an upgrade.
      admin
          .apps()
          .deployments()
          .inNamespace("soko-eta")
          .withName("eta-controller")
          .edit(
              d -> {
                d.getSpec().setReplicas(4);
                return d;
              });
      Await.until(
          "conservative sidecars", () -> provisionerImage("eta"), i -> i.endsWith(":v4.0.1"));
      StorageCluster after =
          Await.until(
              "status follows",
              () -> cluster.get("eta"),
              s -> "v1.30.4".equals(s.getStatus().getKubernetesVersion()));
      assertThat(after.getStatus().getImages().get("csi-resizer")).endsWith(":v1.10.1");
    } finally {
      cluster.version.set(KubernetesVersion.parse(TestCluster.VERSION));
    }
  }

  private static String provisionerImage(String name) {
    return StorageClusterLifecycleIT.daemonSet(name)
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .stream()
        .filter(c -> c.getName().equals("csi-provisioner"))
        .map(Container::getImage)
        .findFirst()
        .orElseThrow();
  }

  @Test
  void secondClusterClaimingADriverNameIsAConflictAndChangesNothing() {
    StorageClusterLifecycleIT.create(Specs.cluster("theta"));
    StorageCluster dup = Specs.cluster("iota");
    dup.getSpec().getDriver().setName("theta.csi.soko.dev");
    StorageCluster conflicted =
        Await.until(
            "conflict reported",
            () -> {
              if (cluster.get("iota") == null) {
                admin.resource(dup).create();
              }
              return cluster.get("iota");
            },
            s ->
                s.getStatus() != null
                    && s.getStatus().getConditions() != null
                    && s.getStatus().getConditions().stream()
                        .anyMatch(c -> "DriverNameConflict".equals(c.getReason())));
    assertThat(StorageClusterLifecycleIT.condition(conflicted, "Degraded").getMessage())
        .contains("already used by StorageCluster theta");
    assertThat(admin.namespaces().withName("soko-iota").get()).isNull();
    assertThat(admin.storage().v1().storageClasses().withName("iota-sc").get()).isNull();
    admin.resource(dup).delete();
    Await.until("iota gone", () -> cluster.get("iota") == null, gone -> gone);
    assertThat(admin.storage().v1().csiDrivers().withName("theta.csi.soko.dev").get()).isNotNull();
  }

  /**
   * A BtrfsSubvolume pool, applied through the real API server (whose schema defaults the class's
   * fsType no longer): the driver's --pool flag names the backend, the pool's StorageClass has
   * fsType btrfs, and the image-file pool beside it renders as before.
   */
  @Test
  void aBtrfsSubvolumePoolReachesTheDriverFlagAndItsStorageClass() {
    StorageCluster sc = Specs.cluster("subvols");
    PoolSpec btrfs = new PoolSpec();
    btrfs.setName("fast");
    btrfs.setPath("/var/lib/soko/subvols-fast");
    btrfs.setBackend(PoolBackend.BtrfsSubvolume);
    sc.getSpec().getPools().add(btrfs);
    StorageClassSpec fast = new StorageClassSpec();
    fast.setName("subvols-fast");
    fast.setPool("fast");
    sc.getSpec().getStorageClasses().add(fast);
    StorageClusterLifecycleIT.create(sc);
    try {
      Container driver =
          StorageClusterLifecycleIT.daemonSet("subvols")
              .getSpec()
              .getTemplate()
              .getSpec()
              .getContainers()
              .stream()
              .filter(c -> c.getName().equals("soko-driver"))
              .findFirst()
              .orElseThrow();
      assertThat(driver.getArgs().stream().filter(a -> a.startsWith("--pool=")))
          .containsExactly(
              "--pool=name=main,path=/var/lib/soko/subvols,capacity=10Gi",
              "--pool=name=fast,path=/var/lib/soko/subvols-fast,backend=btrfs-subvolume");
      assertThat(fsTypeOf("subvols-fast")).isEqualTo("btrfs");
      assertThat(fsTypeOf("subvols-sc")).isEqualTo("ext4");
    } finally {
      admin.resource(sc).delete();
      Await.until("subvols gone", () -> cluster.get("subvols") == null, gone -> gone);
    }
  }

  private static String fsTypeOf(String storageClass) {
    return admin
        .storage()
        .v1()
        .storageClasses()
        .withName(storageClass)
        .get()
        .getParameters()
        .get("csi.storage.k8s.io/fstype");
  }

  /**
   * A StorageClass's parameters and reclaimPolicy are immutable (the API server refuses an update
   * of them), so adding encryption to a class of the StorageCluster, or changing its reclaim
   * policy, would leave the apply refused forever. The operator deletes its class and applies it
   * anew, and says so; volumes provisioned before keep what they were made with.
   */
  @Test
  void aClassChangedInAnImmutableFieldIsRecreatedAndTheClusterSaysSo() {
    StorageClusterLifecycleIT.create(Specs.cluster("recreated"));
    String uid =
        admin.storage().v1().storageClasses().withName("recreated-sc").get().getMetadata().getUid();
    StorageCluster sc = cluster.get("recreated");
    StorageClassSpec cls = sc.getSpec().getStorageClasses().get(0);
    EncryptionSpec encryption = new EncryptionSpec();
    encryption.setMode(EncryptionMode.fscrypt);
    cls.setEncryption(encryption);
    cls.setReclaimPolicy(StorageClassSpec.ReclaimPolicy.Retain);
    admin.resource(sc).update();
    try {
      StorageClass recreated =
          Await.until(
              "recreated-sc with encryption",
              () -> admin.storage().v1().storageClasses().withName("recreated-sc").get(),
              c -> c != null && c.getParameters().containsKey("encryption"));
      assertThat(recreated.getMetadata().getUid()).isNotEqualTo(uid);
      assertThat(recreated.getReclaimPolicy()).isEqualTo("Retain");
      Event event =
          Await.until(
                  "a StorageClassRecreated event",
                  () ->
                      admin.v1().events().inAnyNamespace().list().getItems().stream()
                          .filter(e -> "recreated".equals(e.getInvolvedObject().getName()))
                          .filter(e -> "StorageClassRecreated".equals(e.getReason()))
                          .toList(),
                  l -> !l.isEmpty())
              .get(0);
      assertThat(event.getType()).isEqualTo("Normal");
      assertThat(event.getMessage())
          .contains("recreated-sc")
          .contains("parameters")
          .contains("reclaimPolicy");
      assertThat(
              StorageClusterLifecycleIT.condition(cluster.get("recreated"), "Degraded").getStatus())
          .as("no apply left refused")
          .isEqualTo("False");
    } finally {
      admin.resource(sc).delete();
      Await.until("recreated gone", () -> cluster.get("recreated") == null, gone -> gone);
    }
  }
}

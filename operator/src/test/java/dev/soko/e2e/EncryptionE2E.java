package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.EXT4;
import static dev.soko.e2e.DefaultInstall.RELEASE;
import static dev.soko.e2e.DefaultInstall.SNAPSHOTS;
import static dev.soko.e2e.DefaultInstall.XFS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Encryption at rest as a user meets it on the real nodes: encryption added to the default
 * install's ext4 class (which recreates the class), a claim whose key Secret is made by the user, a
 * pod that writes a marker, the raw image on the node checked for it while the pod runs and once it
 * is gone (and, as a control, the image of a claim without encryption, which shows it), the node
 * plugin killed and the kubelet restarted with the key loaded, a restore of the claim's snapshot
 * with the same key, and a claim whose Secret comes late.
 */
class EncryptionE2E extends RealClusterTier {
  private static final String APPS = "e2e-encryption";
  private static final Duration LONG = Duration.ofSeconds(180);
  private static final String MARKER = "soko-e2e-plaintext-marker-31f7c2";

  /** The key of the claim "secret-data" and of its restore, as base64 (the Secret's field). */
  private final String key = randomKey();

  private String node;
  private String writtenSum;

  EncryptionE2E() {
    super(APPS);
  }

  @BeforeAll
  void install() throws Exception {
    DefaultInstall.helmInstallReady(cluster, client, APPS);
  }

  @Test
  @Order(1)
  void addingEncryptionToTheExt4ClassRecreatesItAndTheClusterSaysSo() {
    String before = ext4Class().getMetadata().getUid();
    List<Map<String, Object>> classes = new ArrayList<>();
    for (Map<String, Object> c : DefaultInstall.CLASSES) {
      Map<String, Object> copy = new HashMap<>(c);
      if (EXT4.equals(c.get("name"))) {
        copy.put("encryption", Map.of("mode", "fscrypt"));
      }
      classes.add(copy);
    }
    client
        .resources(StorageCluster.class)
        .withName(RELEASE)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            Serialization.asJson(Map.of("spec", Map.of("storageClasses", classes))));
    StorageClass encrypted =
        Await.until(
            EXT4 + " with the encryption parameter",
            LONG,
            this::ext4Class,
            c -> c != null && "fscrypt".equals(c.getParameters().get("encryption")));
    assertThat(encrypted.getMetadata().getUid()).isNotEqualTo(before);
    Event recreated =
        Await.until(
                "a StorageClassRecreated event on StorageCluster " + RELEASE,
                LONG,
                () ->
                    client.v1().events().inAnyNamespace().list().getItems().stream()
                        .filter(e -> RELEASE.equals(e.getInvolvedObject().getName()))
                        .filter(e -> "StorageClassRecreated".equals(e.getReason()))
                        .toList(),
                l -> !l.isEmpty())
            .get(0);
    assertThat(recreated.getMessage()).contains(EXT4).contains("encryption added");
  }

  @Test
  @Order(2)
  void aMarkerAPodWritesIsNotInTheRawImageOnTheNode() throws Exception {
    secret("secret-data-key", key);
    apps.create(apps.claim("secret-data", EXT4, "64Mi", false));
    apps.create(apps.pod("secret-writer", "secret-data", false, false));
    apps.awaitRunning("secret-writer", LONG);
    apps.sh(
        "secret-writer", "yes " + MARKER + " | head -c 1048576 > /data/" + MARKER + ".txt && sync");
    writtenSum = apps.sh("secret-writer", "sha256sum /data/" + MARKER + ".txt | cut -d' ' -f1");
    node = apps.nodesOf(apps.awaitBound("secret-data", LONG)).get(0);
    String image = imageOf("secret-data");
    assertThat(cluster.occurrences(node, image, MARKER))
        .as("the marker in the raw image while the pod runs (fscrypt encrypts before the disk)")
        .isZero();

    apps.snapshot("secret-snap", "secret-data", SNAPSHOTS, LONG);
    client.pods().inNamespace(APPS).withName("secret-writer").withGracePeriod(1).delete();
    String handle = volumeHandle("secret-data");
    Await.until(
        "volume " + handle + " unstaged on " + node + " (its loop device gone)",
        LONG,
        EncryptionE2E::loopDevices,
        loops -> loops.lines().noneMatch(line -> line.contains(handle)));
    assertThat(cluster.occurrences(node, image, MARKER)).as("the marker in the raw image").isZero();

    // The same look at a claim of a class without encryption finds the marker: the check sees
    // plaintext where there is some.
    apps.create(apps.claim("plain-data", XFS, "320Mi", false));
    apps.create(apps.pod("plain-writer", "plain-data", false, false));
    apps.awaitRunning("plain-writer", LONG);
    apps.sh("plain-writer", "yes " + MARKER + " | head -c 1048576 > /data/marker.txt && sync");
    String plainNode = apps.nodesOf(apps.claimNamed("plain-data")).get(0);
    assertThat(cluster.occurrences(plainNode, imageOf("plain-data"), MARKER))
        .as("the marker in the raw image of a claim without encryption")
        .isPositive();
  }

  @Test
  @Order(3)
  void theNodePluginKilledAndTheKubeletRestartedWithTheKeyLoadedLeaveTheVolumeUsable()
      throws Exception {
    apps.create(onNode(apps.pod("secret-reader", "secret-data", false, false)));
    apps.awaitRunning("secret-reader", LONG);
    Pod plugin = installed.nodePluginPod(node);
    ContainerStatus before = driverStatus(plugin);
    cluster.killContainer(node, before.getContainerID());
    Await.until(
        "the driver container to restart on " + node,
        LONG,
        () -> driverStatus(installed.nodePluginPod(node)),
        s -> s.getRestartCount() > before.getRestartCount() && Boolean.TRUE.equals(s.getReady()));
    cluster.restart("kubelet", node);
    Await.until("node " + node + " Ready", LONG, () -> nodeReady(node), ready -> ready);
    String sum =
        Await.until(
            "the marker's sha256 read in pod secret-reader after the restarts",
            LONG,
            () -> apps.sh("secret-reader", "sha256sum /data/" + MARKER + ".txt | cut -d' ' -f1"),
            Objects::nonNull);
    assertThat(sum).isEqualTo(writtenSum);
    apps.sh("secret-reader", "echo after > /data/after-restart && sync");

    // A new stage after the restarts: the key is added again and the data reads the same.
    client.pods().inNamespace(APPS).withName("secret-reader").withGracePeriod(1).delete();
    apps.create(onNode(apps.pod("secret-again", "secret-data", false, false)));
    apps.awaitRunning("secret-again", LONG);
    assertThat(apps.sh("secret-again", "cat /data/after-restart")).isEqualTo("after");
    assertThat(apps.sh("secret-again", "sha256sum /data/" + MARKER + ".txt | cut -d' ' -f1"))
        .isEqualTo(writtenSum);
  }

  @Test
  @Order(4)
  void aRestoreOfTheSnapshotWithTheSameKeyReadsTheSameBytes() {
    secret("secret-restored-key", key);
    apps.create(apps.restoredClaim("secret-restored", EXT4, "64Mi", "secret-snap"));
    apps.create(apps.pod("restore-reader", "secret-restored", false, false));
    apps.awaitRunning("restore-reader", LONG);
    assertThat(apps.sh("restore-reader", "sha256sum /data/" + MARKER + ".txt | cut -d' ' -f1"))
        .isEqualTo(writtenSum);
  }

  @Test
  @Order(5)
  void aClaimWhoseSecretIsMissingWaitsWithAnEventNamingItAndStartsOnceItExists() {
    apps.create(apps.claim("late", EXT4, "64Mi", false));
    apps.create(apps.pod("late-user", "late", false, false));
    Event failed = apps.awaitEvent("late-user", "FailedMount", LONG);
    assertThat(failed.getMessage()).contains("late-key");
    assertThat(client.pods().inNamespace(APPS).withName("late-user").get().getStatus().getPhase())
        .isEqualTo("Pending");
    secret("late-key", randomKey());
    apps.awaitRunning("late-user", LONG);
    assertThat(apps.sh("late-user", "echo ok > /data/f && cat /data/f")).isEqualTo("ok");
  }

  @Test
  @Order(6)
  void uninstallLeavesNothing() throws Exception {
    apps.deleteSnapshots();
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    client.secrets().inNamespace(APPS).delete();
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
  }

  private StorageClass ext4Class() {
    return client.storage().v1().storageClasses().withName(EXT4).get();
  }

  /** The Secret the encrypted class names for a claim: the key in field encryptionKey. */
  private void secret(String name, String base64Key) {
    client
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(APPS)
                .endMetadata()
                .addToStringData("encryptionKey", base64Key)
                .build())
        .create();
  }

  /** 64 random bytes as base64, as docs/encryption.md tells a user to make a key. */
  private static String randomKey() {
    byte[] raw = new byte[64];
    new SecureRandom().nextBytes(raw);
    return Base64.getEncoder().encodeToString(raw);
  }

  private String volumeHandle(String claim) {
    String pv = apps.claimNamed(claim).getSpec().getVolumeName();
    return client.persistentVolumes().withName(pv).get().getSpec().getCsi().getVolumeHandle();
  }

  /** The claim's image file as its node sees it: the pool's images folder (docs/design.md). */
  private String imageOf(String claim) {
    return DefaultInstall.POOL_PATH + "/images/" + volumeHandle(claim) + ".img";
  }

  private io.fabric8.kubernetes.api.model.PodBuilder onNode(
      io.fabric8.kubernetes.api.model.PodBuilder pod) {
    return pod.editSpec().withNodeName(node).endSpec();
  }

  /** The host's loop devices and their backing files, a line each. */
  private static String loopDevices() {
    try {
      return LocalCluster.run(List.of("losetup", "-l", "-n", "-O", "NAME,BACK-FILE"), 10);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static ContainerStatus driverStatus(Pod plugin) {
    return plugin.getStatus().getContainerStatuses().stream()
        .filter(s -> "soko-driver".equals(s.getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no soko-driver container in " + plugin));
  }

  private boolean nodeReady(String name) {
    return client.nodes().withName(name).get().getStatus().getConditions().stream()
        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }
}

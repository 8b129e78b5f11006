package dev.soko.operator.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.api.v1alpha1.EncryptionMode;
import dev.soko.api.v1alpha1.EncryptionSpec;
import dev.soko.api.v1alpha1.NodeRequest;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector against fabric8's mock API server (CRUD mode): every object kind is stored and
 * listed as by a real server; logs and exec are not served there, which the bundle must record
 * rather than fail on.
 */
@EnableKubernetesMockClient(crud = true)
class SupportBundleTest {
  private static final String LITERAL_ENV = "literal-env-value-4d1c";
  private static final String SECRET_VALUE = "secret-value-93b7";
  private static final String NS = "soko-fast";
  private static final String OPERATOR_NS = "soko-system";

  KubernetesClient client;
  io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;

  @TempDir Path dir;

  private DesiredState desired;

  /**
   * The mock answers a log request it has no expectation for with a list of everything it stores
   * (the Secret too), which no API server does; every log request the collector makes is given an
   * answer here: two logs, and refusals for the rest.
   */
  private void logs() {
    String since = "&sinceSeconds=86400";
    String operator = "/api/v1/namespaces/soko-system/pods/soko-operator-5d9f/log?pretty=false";
    String node = "/api/v1/namespaces/soko-fast/pods/fast-node-x7k2p/log?pretty=false";
    server
        .expect()
        .get()
        .withPath(operator + "&container=operator" + since)
        .andReturn(200, "operator started\n")
        .always();
    server
        .expect()
        .get()
        .withPath(operator + "&container=operator&previous=true" + since)
        .andReturn(400, "previous terminated container not found")
        .always();
    server
        .expect()
        .get()
        .withPath(node + "&container=soko-driver" + since)
        .andReturn(200, "driver serving\n")
        .always();
    for (String c : List.of("csi-provisioner", "csi-snapshotter")) {
      server
          .expect()
          .get()
          .withPath(node + "&container=" + c + since)
          .andReturn(404, "not found")
          .always();
    }
  }

  @BeforeEach
  void install() {
    logs();
    StorageCluster sc = Fixtures.sample();
    desired =
        DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")));
    client.resources(StorageCluster.class).resource(sc).create();
    StorageNode report = new StorageNode();
    report.getMetadata().setName("fast.node-a");
    report.setNode("node-a");
    report
        .getMetadata()
        .setManagedFields(
            List.of(new ManagedFieldsEntryBuilder().withManager("soko-driver").build()));
    client.resources(StorageNode.class).resource(report).create();
    for (String ns : List.of(NS, OPERATOR_NS, "apps")) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    NodeRequest request = new NodeRequest();
    request.getMetadata().setName("modifyvolume-0123");
    request.getMetadata().setNamespace(NS);
    client.resources(NodeRequest.class).inNamespace(NS).resource(request).create();
    for (HasMetadata o : desired.all()) {
      if (!(o instanceof GenericKubernetesResource) && !"Namespace".equals(o.getKind())) {
        client.resource(o).create();
      }
    }
    DaemonSet ds = desired.nodeDaemonSet();
    ds.getMetadata()
        .setManagedFields(
            List.of(new ManagedFieldsEntryBuilder().withManager("soko-operator").build()));
    ds.getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .getEnv()
        .add(new EnvVar("EXTRA", LITERAL_ENV, null));
    client.apps().daemonSets().resource(ds).update();
    Pod node =
        new PodBuilder()
            .withNewMetadata()
            .withName("fast-node-x7k2p")
            .withNamespace(NS)
            .withLabels(ds.getSpec().getTemplate().getMetadata().getLabels())
            .endMetadata()
            .withSpec(ds.getSpec().getTemplate().getSpec())
            .editSpec()
            .withNodeName("node-a")
            .endSpec()
            .withNewStatus()
            .withPhase("Running")
            .endStatus()
            .build();
    client.pods().resource(node).create();
    client
        .pods()
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("soko-operator-5d9f")
                .withNamespace(OPERATOR_NS)
                .addToLabels(SupportBundle.OPERATOR_POD_LABEL, SupportBundle.OPERATOR_POD_VALUE)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("operator")
                .withImage("soko-operator")
                .addNewEnv()
                .withName("TOKEN")
                .withValue(LITERAL_ENV)
                .endEnv()
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withContainerStatuses(
                    new ContainerStatusBuilder().withName("operator").withRestartCount(2).build())
                .endStatus()
                .build())
        .create();
    // The chart's Deployment in a namespace where no operator pod runs.
    client
        .apps()
        .deployments()
        .resource(
            new io.fabric8.kubernetes.api.model.apps.DeploymentBuilder()
                .withNewMetadata()
                .withName("soko-operator")
                .withNamespace("soko-idle")
                .addToLabels(SupportBundle.OPERATOR_POD_LABEL, SupportBundle.OPERATOR_POD_VALUE)
                .endMetadata()
                .build())
        .create();
    client
        .secrets()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("creds")
                .withNamespace(NS)
                .endMetadata()
                .addToData("password", Base64.getEncoder().encodeToString(SECRET_VALUE.getBytes()))
                .addToStringData("plain", SECRET_VALUE)
                .build())
        .create();
    client
        .v1()
        .events()
        .resource(
            new EventBuilder()
                .withNewMetadata()
                .withName("fast-node.1")
                .withNamespace(NS)
                .endMetadata()
                .withReason("Started")
                .withMessage("started")
                .withNewInvolvedObject()
                .withKind("Pod")
                .withName("fast-node-x7k2p")
                .endInvolvedObject()
                .build())
        .create();
    client
        .storage()
        .v1()
        .csiDrivers()
        .resource(
            new CSIDriverBuilder()
                .withNewMetadata()
                .withName("other.csi.example.com")
                .endMetadata()
                .build())
        .create();
    client
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pvc-1")
                .endMetadata()
                .withNewSpec()
                .withNewCsi()
                .withDriver("fast.csi.soko.dev")
                .withVolumeHandle("nvme/pvc-1")
                .endCsi()
                .withNewClaimRef()
                .withNamespace("apps")
                .withName("data")
                .endClaimRef()
                .endSpec()
                .build())
        .create();
    client
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pv-other")
                .endMetadata()
                .withNewSpec()
                .withNewCsi()
                .withDriver("other.csi.example.com")
                .withVolumeHandle("x")
                .endCsi()
                .endSpec()
                .build())
        .create();
    client
        .persistentVolumeClaims()
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName("data")
                .withNamespace("apps")
                .endMetadata()
                .withNewSpec()
                .withVolumeName("pvc-1")
                .endSpec()
                .build())
        .create();
  }

  @Test
  void theArchiveHoldsSokosObjectsRedactedAndNoSecret() throws Exception {
    Path out = dir.resolve("bundle.tar.gz");
    SupportBundle.Summary summary =
        SupportBundle.write(client, out, Duration.ofHours(24), Duration.ofSeconds(5));
    Map<String, byte[]> entries = Tars.read(out);

    assertThat(entries.keySet())
        .containsAll(summary.entries())
        .contains(
            "summary.txt",
            "manifest.json",
            "cluster/StorageCluster/fast.yaml",
            "cluster/StorageNode/fast.node-a.yaml",
            "cluster/CSIDriver/fast.csi.soko.dev.yaml",
            "cluster/StorageClass/soko-nvme.yaml",
            "cluster/PersistentVolume/pvc-1.yaml",
            "namespaces/apps/PersistentVolumeClaim/data.yaml",
            "namespaces/soko-fast/DaemonSet/fast-node.yaml",
            "namespaces/soko-fast/Deployment/fast-controller.yaml",
            "namespaces/soko-fast/Pod/fast-node-x7k2p.yaml",
            "namespaces/soko-fast/ServiceAccount/fast-node.yaml",
            "namespaces/soko-fast/Event/fast-node.1.yaml",
            "namespaces/soko-fast/NodeRequest/modifyvolume-0123.yaml",
            "namespaces/soko-system/Pod/soko-operator-5d9f.yaml",
            "namespaces/soko-idle/Deployment/soko-operator.yaml")
        .doesNotContain(
            "cluster/CSIDriver/other.csi.example.com.yaml",
            "cluster/PersistentVolume/pv-other.yaml");
    assertThat(entries.keySet())
        .anyMatch(e -> e.startsWith("cluster/ClusterRole/soko:fast:"))
        .anyMatch(e -> e.startsWith("cluster/ClusterRoleBinding/soko:fast:"))
        .noneMatch(e -> e.contains("Secret/") || e.contains("/creds"));

    String encoded = Base64.getEncoder().encodeToString(SECRET_VALUE.getBytes());
    entries.forEach(
        (name, bytes) -> {
          String text = new String(bytes, StandardCharsets.UTF_8);
          assertThat(text)
              .as(name)
              .doesNotContain(SECRET_VALUE, encoded, LITERAL_ENV, "managedFields");
        });
    String ds = text(entries, "namespaces/soko-fast/DaemonSet/fast-node.yaml");
    assertThat(ds).contains("name: \"EXTRA\"", Redaction.REDACTED);
  }

  /**
   * An encrypted volume's key: field encryptionKey of the Secret that its PersistentVolume's
   * nodeStageSecretRef names, beside its claim. The archive holds the class, the volume and the
   * claim that name the Secret, and neither the Secret nor the key in any encoding.
   */
  @Test
  void anEncryptionKeySecretNeverEntersTheArchive() throws Exception {
    byte[] raw = new byte[64];
    new SecureRandom().nextBytes(raw);
    String key = Base64.getEncoder().encodeToString(raw);
    client.resource(encryptedStorageClass("soko-secure")).create();
    client
        .secrets()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("secure-key")
                .withNamespace("apps")
                .endMetadata()
                .addToData(
                    "encryptionKey",
                    Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.US_ASCII)))
                .build())
        .create();
    client
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pvc-2")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("soko-secure")
                .withNewCsi()
                .withDriver("fast.csi.soko.dev")
                .withVolumeHandle("nvme/pvc-2")
                .withFsType("ext4")
                .addToVolumeAttributes("encryption", "fscrypt")
                .withNewNodeStageSecretRef("secure-key", "apps")
                .endCsi()
                .withNewClaimRef()
                .withNamespace("apps")
                .withName("secure")
                .endClaimRef()
                .endSpec()
                .build())
        .create();
    client
        .persistentVolumeClaims()
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName("secure")
                .withNamespace("apps")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("soko-secure")
                .withVolumeName("pvc-2")
                .endSpec()
                .build())
        .create();

    Path out = dir.resolve("bundle.tar.gz");
    SupportBundle.write(client, out, Duration.ofHours(24), Duration.ofSeconds(5));
    Map<String, byte[]> entries = Tars.read(out);

    assertThat(entries.keySet())
        .contains(
            "cluster/StorageClass/soko-secure.yaml",
            "cluster/PersistentVolume/pvc-2.yaml",
            "namespaces/apps/PersistentVolumeClaim/secure.yaml")
        .noneMatch(e -> e.contains("Secret/") || e.contains("secure-key"));
    assertThat(text(entries, "cluster/PersistentVolume/pvc-2.yaml"))
        .as("the reference names the Secret, not the key")
        .contains("secure-key");
    String rawText = new String(raw, StandardCharsets.ISO_8859_1);
    String inData = Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.US_ASCII));
    String hex = HexFormat.of().formatHex(raw);
    entries.forEach(
        (name, bytes) -> {
          assertThat(new String(bytes, StandardCharsets.UTF_8))
              .as(name)
              .doesNotContain(key, inData, hex, "encryptionKey");
          assertThat(new String(bytes, StandardCharsets.ISO_8859_1))
              .as("%s, raw bytes", name)
              .doesNotContain(rawText);
        });
  }

  /** The sample's StorageClass renders with an encrypted class of that name beside it. */
  private static StorageClass encryptedStorageClass(String name) {
    StorageCluster sc = Fixtures.sample();
    StorageClassSpec c = new StorageClassSpec();
    c.setName(name);
    c.setPool("nvme");
    EncryptionSpec encryption = new EncryptionSpec();
    encryption.setMode(EncryptionMode.fscrypt);
    c.setEncryption(encryption);
    sc.getSpec().getStorageClasses().add(c);
    return DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")))
        .storageClasses()
        .stream()
        .filter(s -> s.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void logsAndExecThatTheServerRefusesAreRecordedInTheArchive() throws Exception {
    Path out = dir.resolve("bundle.tar.gz");
    SupportBundle.Summary summary =
        SupportBundle.write(client, out, Duration.ofHours(24), Duration.ofSeconds(5));
    Map<String, byte[]> entries = Tars.read(out);
    // The operator container restarted, so its previous log is asked for too.
    assertThat(text(entries, "logs/soko-system/soko-operator-5d9f/operator.log"))
        .isEqualTo("operator started\n");
    assertThat(text(entries, "logs/soko-fast/fast-node-x7k2p/soko-driver.log"))
        .isEqualTo("driver serving\n");
    assertThat(entries.keySet())
        .contains(
            "nodes/node-a/ERROR.txt",
            "logs/soko-system/soko-operator-5d9f/operator.previous.log.ERROR.txt",
            "logs/soko-fast/fast-node-x7k2p/csi-provisioner.log.ERROR.txt",
            "logs/soko-fast/fast-node-x7k2p/csi-snapshotter.log.ERROR.txt")
        .doesNotContain(
            "logs/soko-system/soko-operator-5d9f/operator.previous.log",
            "logs/soko-fast/fast-node-x7k2p/soko-driver.previous.log",
            "nodes/node-a/mountinfo");
    assertThat(text(entries, "nodes/node-a/ERROR.txt"))
        .contains("cat /proc/self/mountinfo", "losetup --list --json", "ls -la /var/lib/soko/nvme");
    assertThat(summary.failures())
        .anyMatch(f -> f.startsWith("nodes/node-a/mountinfo"))
        .anyMatch(f -> f.startsWith("logs/soko-fast/fast-node-x7k2p/csi-provisioner.log"));

    Map<?, ?> manifest = Serialization.unmarshal(text(entries, "manifest.json"), Map.class);
    assertThat(manifest.get("failures")).isEqualTo(summary.failures());
    assertThat(manifest.get("entries")).isEqualTo(summary.entries());
    assertThat(manifest.get("server")).isEqualTo(client.getMasterUrl().getHost());
    assertThat(summary.operatorVersion()).isNotEqualTo("unknown").isNotBlank();
    assertThat(text(entries, "summary.txt"))
        .contains("cluster: " + client.getMasterUrl().getHost(), "StorageCluster: 1", "failed:");
  }

  @Test
  void anExecThatEndsWithoutAStatusIsRecordedAndTheNextCommandsStillRun() throws Exception {
    // The connection is upgraded and closed again without a word, as by a driver container that
    // is gone.
    server
        .expect()
        .get()
        .withPath(
            "/api/v1/namespaces/soko-fast/pods/fast-node-x7k2p/exec?command=cat"
                + "&command=%2Fproc%2Fself%2Fmountinfo&container=soko-driver&stdout=true&stderr=true")
        .andUpgradeToWebSocket()
        .open()
        .done()
        .always();
    Path out = dir.resolve("bundle.tar.gz");
    SupportBundle.Summary summary =
        SupportBundle.write(client, out, Duration.ofHours(24), Duration.ofSeconds(5));
    String errors = text(Tars.read(out), "nodes/node-a/ERROR.txt");
    assertThat(errors)
        .contains(
            "cat /proc/self/mountinfo in soko-fast/fast-node-x7k2p: the connection closed without"
                + " an exit status")
        .contains("losetup --list --json in soko-fast/fast-node-x7k2p")
        .contains("du -k -d 1 /var/lib/soko/nvme in soko-fast/fast-node-x7k2p");
    assertThat(summary.failures()).anyMatch(f -> f.contains("without an exit status"));
  }

  @Test
  void aStepThatHangsIsGivenUpOnAfterItsTimeout() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      long start = System.nanoTime();
      assertThatThrownBy(
              () ->
                  NodeViews.within(
                      Duration.ofMillis(200),
                      executor,
                      () -> {
                        Thread.sleep(30_000);
                        return 0;
                      }))
          .isInstanceOf(IOException.class)
          .hasMessage("no answer within 200ms");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
      assertThat(NodeViews.within(Duration.ofSeconds(1), executor, () -> 7)).isEqualTo(7);
      assertThatThrownBy(
              () ->
                  NodeViews.within(
                      Duration.ofSeconds(1),
                      executor,
                      () -> {
                        throw new IllegalStateException("refused");
                      }))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("refused");
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void aLogIsCopiedUpToItsLimitAndACutIsReported() throws IOException {
    byte[] log = "0123456789".getBytes(StandardCharsets.UTF_8);
    var out = new java.io.ByteArrayOutputStream();
    assertThat(PodLogs.copy(new java.io.ByteArrayInputStream(log), out, 4)).isTrue();
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("0123");
    out.reset();
    assertThat(PodLogs.copy(new java.io.ByteArrayInputStream(log), out, 10)).isFalse();
    assertThat(out.toByteArray()).isEqualTo(log);
  }

  @Test
  void anUnreachableApiServerGivesASummaryOfWhatFailedAndNothingElse() throws Exception {
    Path out = dir.resolve("bundle.tar.gz");
    try (KubernetesClient unreachable =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder()
                    .withMasterUrl("https://127.0.0.1:1")
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build()) {
      SupportBundle.Summary summary =
          SupportBundle.write(unreachable, out, Duration.ofHours(1), Duration.ofSeconds(1));
      assertThat(Tars.read(out).keySet()).containsExactly("summary.txt", "manifest.json");
      assertThat(summary.server()).isEqualTo("127.0.0.1");
      assertThat(summary.kubernetesVersion()).isEqualTo("unknown");
      assertThat(summary.failures())
          .anyMatch(f -> f.startsWith("kubernetes version: "))
          .contains("nothing collected: the API server did not answer /version");
    }
  }

  @Test
  void thePoolsComeFromTheDriverContainersPoolArguments() {
    Pod pod =
        new PodBuilder()
            .withSpec(desired.nodeDaemonSet().getSpec().getTemplate().getSpec())
            .build();
    assertThat(NodeViews.pools(pod)).containsExactly(Map.entry("nvme", "/var/lib/soko/nvme"));
  }

  private static String text(Map<String, byte[]> entries, String name) {
    assertThat(entries).containsKey(name);
    return new String(entries.get(name), StandardCharsets.UTF_8);
  }
}

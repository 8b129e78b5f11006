package dev.soko.e2e;

import static dev.soko.e2e.DefaultInstall.XFS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.SnapshotMetadata;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.LocalPortForward;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import snapshotmetadata.Schema.BlockMetadata;
import snapshotmetadata.Schema.BlockMetadataType;
import snapshotmetadata.Schema.GetMetadataAllocatedRequest;
import snapshotmetadata.Schema.GetMetadataAllocatedResponse;
import snapshotmetadata.Schema.GetMetadataDeltaRequest;
import snapshotmetadata.Schema.GetMetadataDeltaResponse;
import snapshotmetadata.SnapshotMetadataGrpc;

/**
 * Changed block tracking through Kubernetes' SnapshotMetadata API, called as a backup application
 * calls it: the steps of external-snapshot-metadata's pkg/iterator at v1.0.0 (iter.go), in Java. A
 * ServiceAccount bound to the client ClusterRole the operator makes; the driver of the snapshot's
 * VolumeSnapshotContent; the SnapshotMetadataService named after it; a token from the TokenRequest
 * API with that object's audience; TLS trusting its caCert; GetMetadataAllocated and
 * GetMetadataDelta with the token, the namespace and the snapshots' names (the base by its CSI
 * handle) on the sidecar in the controller pod, which relays to the snapshot's node.
 *
 * <p>The test runs on the host, where no pod or Service address is routed (RealNodeE2E checks the
 * host's routes are untouched): it reaches the Service's target port on a ready controller pod
 * through the API server's port-forward and dials it under the Service's name, which the
 * certificate carries.
 *
 * <p>A 1 GiB block claim on the XFS pool: 8 MiB written, snapshot A; three 4 KiB blocks written at
 * known offsets, snapshot B. Allocated(A) covers the 8 MiB and holds at most 1 MiB more; Delta(A,
 * B) covers the three blocks, with at most 64 KiB more.
 */
class SnapshotMetadataE2E extends RealClusterTier {
  private static final String APPS = "e2e-snapshot-metadata";
  private static final Duration LONG = Duration.ofSeconds(180);
  private static final String BACKUP_APP = "backup-app";
  private static final String NO_ROLE = "no-role";
  private static final String BINDING = "e2e-backup-app-snapshot-metadata";
  private static final Names NAMES = new Names(DefaultInstall.RELEASE, DefaultInstall.SYSTEM);
  private static final ResourceDefinitionContext SNAPSHOT_METADATA_SERVICES =
      new ResourceDefinitionContext.Builder()
          .withGroup("cbt.storage.k8s.io")
          .withVersion("v1beta1")
          .withKind("SnapshotMetadataService")
          .withPlural("snapshotmetadataservices")
          .withNamespaced(false)
          .build();
  private static final ResourceDefinitionContext SNAPSHOT_CONTENTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withKind("VolumeSnapshotContent")
          .withPlural("volumesnapshotcontents")
          .withNamespaced(false)
          .build();

  private static final long MIB = 1L << 20;
  private static final long BLOCK = 4096;
  private static final long CAPACITY = 1L << 30;
  private static final long WRITTEN_BEFORE_A = 8 * MIB;

  /**
   * Written between A and B: one block inside the first 8 MiB (a rewrite of shared data), one in
   * the never-written middle, the device's last.
   */
  private static final List<Long> WRITTEN_AFTER_A = List.of(BLOCK, 300 * MIB, CAPACITY - BLOCK);

  /** A block device holds no filesystem metadata: what may come beyond the data written. */
  private static final long ALLOCATED_SLACK = MIB;

  private static final long DELTA_SLACK = 64 * 1024;

  private LocalPortForward forward;
  private ManagedChannel channel;
  private GenericKubernetesResource service;

  SnapshotMetadataE2E() {
    super(APPS);
  }

  @BeforeAll
  void install() throws Exception {
    DefaultInstall.helmInstallReady(cluster, client, APPS);
    for (String account : List.of(BACKUP_APP, NO_ROLE)) {
      client
          .resource(
              new ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName(account)
                  .withNamespace(APPS)
                  .endMetadata()
                  .build())
          .serverSideApply();
    }
    // docs/backups.md, "Using it from a backup application", step 1.
    client
        .resource(
            new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(BINDING)
                .endMetadata()
                .withNewRoleRef(
                    "rbac.authorization.k8s.io",
                    "ClusterRole",
                    NAMES.clusterRole("snapshot-metadata-client"))
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(BACKUP_APP)
                .withNamespace(APPS)
                .endSubject()
                .build())
        .serverSideApply();
  }

  @AfterAll
  void closeChannel() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
    if (forward != null) {
      forward.close();
    }
  }

  @Test
  @Order(1)
  void theStatusSaysItRunsAndTheObjectCarriesTheCaOfTheSidecarsCertificate() {
    StorageCluster sc =
        Await.until(
            "status.changedBlockTracking.running",
            LONG,
            installed::storageCluster,
            s ->
                s.getStatus() != null
                    && s.getStatus().getChangedBlockTracking() != null
                    && s.getStatus().getChangedBlockTracking().running());
    assertThat(sc.getStatus().getChangedBlockTracking().reason()).isEqualTo("Running");
    assertThat(spec("audience")).isEqualTo(SnapshotMetadata.AUDIENCE);
    Secret tls =
        client
            .secrets()
            .inNamespace(DefaultInstall.SYSTEM)
            .withName(SnapshotMetadata.secretName(NAMES))
            .get();
    assertThat(decode(tls.getData().get("ca.crt"))).isEqualTo(caCert());
  }

  @Test
  @Order(2)
  void allocatedAndDeltaCoverWhatWasWrittenAndLittleElse() throws Exception {
    apps.create(apps.claim("cbt-source", XFS, "1Gi", true));
    apps.create(apps.pod("cbt-writer", "cbt-source", true, false));
    apps.awaitRunning("cbt-writer", LONG);
    apps.sh(
        "cbt-writer",
        "dd if=/dev/urandom of=" + Workloads.DEVICE + " bs=1M count=8 conv=fsync 2>/dev/null");
    apps.snapshot("cbt-a", "cbt-source", DefaultInstall.SNAPSHOTS, LONG);
    for (long offset : WRITTEN_AFTER_A) {
      apps.sh(
          "cbt-writer",
          "dd if=/dev/urandom of="
              + Workloads.DEVICE
              + " bs=4096 count=1 seek="
              + offset / BLOCK
              + " conv=fsync 2>/dev/null");
    }
    apps.snapshot("cbt-b", "cbt-source", DefaultInstall.SNAPSHOTS, LONG);

    // iter.go run(): the driver of the snapshot's content, its SnapshotMetadataService, a token.
    GenericKubernetesResource contentA = content("cbt-a");
    assertThat(Workloads.field(contentA, "spec", "driver")).isEqualTo(DefaultInstall.DRIVER);
    String token = token(BACKUP_APP, spec("audience"));
    SnapshotMetadataGrpc.SnapshotMetadataBlockingStub sidecar =
        SnapshotMetadataGrpc.newBlockingStub(channel());

    List<BlockMetadata> allocated = new ArrayList<>();
    Iterator<GetMetadataAllocatedResponse> a =
        sidecar.getMetadataAllocated(
            GetMetadataAllocatedRequest.newBuilder()
                .setSecurityToken(token)
                .setNamespace(APPS)
                .setSnapshotName("cbt-a")
                .build());
    while (a.hasNext()) {
      GetMetadataAllocatedResponse r = a.next();
      assertThat(r.getBlockMetadataType()).isEqualTo(BlockMetadataType.VARIABLE_LENGTH);
      assertThat(r.getVolumeCapacityBytes()).isEqualTo(CAPACITY);
      allocated.addAll(r.getBlockMetadataList());
    }
    assertInOrderAndApart(allocated);
    assertThat(covered(allocated, 0, WRITTEN_BEFORE_A))
        .as("the 8 MiB written before A, in %s", allocated)
        .isEqualTo(WRITTEN_BEFORE_A);
    assertThat(total(allocated))
        .as("allocated(A): %s", allocated)
        .isLessThanOrEqualTo(WRITTEN_BEFORE_A + ALLOCATED_SLACK);

    // iter.go getPrevSnapshotID(): the base by its CSI handle, the target by its name.
    String baseHandle = (String) Workloads.field(contentA, "status", "snapshotHandle");
    List<BlockMetadata> delta = new ArrayList<>();
    Iterator<GetMetadataDeltaResponse> d =
        sidecar.getMetadataDelta(
            GetMetadataDeltaRequest.newBuilder()
                .setSecurityToken(token)
                .setNamespace(APPS)
                .setBaseSnapshotId(baseHandle)
                .setTargetSnapshotName("cbt-b")
                .build());
    while (d.hasNext()) {
      GetMetadataDeltaResponse r = d.next();
      assertThat(r.getBlockMetadataType()).isEqualTo(BlockMetadataType.VARIABLE_LENGTH);
      assertThat(r.getVolumeCapacityBytes()).isEqualTo(CAPACITY);
      delta.addAll(r.getBlockMetadataList());
    }
    assertInOrderAndApart(delta);
    for (long offset : WRITTEN_AFTER_A) {
      assertThat(covered(delta, offset, BLOCK))
          .as("the block written at %d is in delta(A, B): %s", offset, delta)
          .isEqualTo(BLOCK);
    }
    assertThat(total(delta) - WRITTEN_AFTER_A.size() * BLOCK)
        .as("bytes in delta(A, B) beyond the three blocks: %s", delta)
        .isBetween(0L, DELTA_SLACK);
  }

  /**
   * The sidecar checks every caller (pkg/internal/authz at v1.0.0): a token for another audience is
   * UNAUTHENTICATED, one of an account not bound to the client role PERMISSION_DENIED.
   */
  @Test
  @Order(3)
  void aCallerWithoutTheAudienceOrTheRoleIsRefused() throws Exception {
    SnapshotMetadataGrpc.SnapshotMetadataBlockingStub sidecar =
        SnapshotMetadataGrpc.newBlockingStub(channel());
    assertThat(refusal(sidecar, token(BACKUP_APP, "someone-else")))
        .isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(refusal(sidecar, token(NO_ROLE, spec("audience"))))
        .isEqualTo(Status.Code.PERMISSION_DENIED);
  }

  @Test
  @Order(4)
  void uninstallLeavesNothing() throws Exception {
    client.rbac().clusterRoleBindings().withName(BINDING).delete();
    apps.deleteAllAndAwaitTheVolumesGone(LONG);
    DefaultInstall.uninstall(cluster, client, APPS, LONG);
    assertThat(
            client
                .genericKubernetesResources(SNAPSHOT_METADATA_SERVICES)
                .withName(DefaultInstall.DRIVER)
                .get())
        .as("the SnapshotMetadataService goes with the StorageCluster")
        .isNull();
  }

  private static Status.Code refusal(
      SnapshotMetadataGrpc.SnapshotMetadataBlockingStub sidecar, String token) {
    Iterator<GetMetadataAllocatedResponse> answer =
        sidecar.getMetadataAllocated(
            GetMetadataAllocatedRequest.newBuilder()
                .setSecurityToken(token)
                .setNamespace(APPS)
                .setSnapshotName("cbt-a")
                .build());
    StatusRuntimeException e =
        (StatusRuntimeException)
            catchThrowable(
                () -> {
                  while (answer.hasNext()) {
                    answer.next();
                  }
                });
    assertThat(e).as("refused").isNotNull();
    return e.getStatus().getCode();
  }

  /** iter.go createSecurityToken(): the TokenRequest API, for the account, with the audience. */
  private String token(String account, String audience) {
    return client
        .serviceAccounts()
        .inNamespace(APPS)
        .withName(account)
        .tokenRequest(
            new TokenRequestBuilder()
                .withNewSpec()
                .withAudiences(audience)
                .withExpirationSeconds(600L)
                .endSpec()
                .build())
        .getStatus()
        .getToken();
  }

  /**
   * iter.go getGRPCClient(): TLS trusting the object's caCert, to its address. The address's
   * Service (name.namespace:port) is reached through a port-forward to its target port on a ready
   * pod it selects; the name it is dialled by stays the address's, for the certificate's check.
   */
  private ManagedChannel channel() throws Exception {
    if (channel != null) {
      return channel;
    }
    String address = spec("address");
    String host = address.substring(0, address.lastIndexOf(':'));
    int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    String[] nameAndNamespace = host.split("\\.", 2);
    Service svc =
        client.services().inNamespace(nameAndNamespace[1]).withName(nameAndNamespace[0]).get();
    assertThat(svc).as("the Service of " + address).isNotNull();
    ServicePort servicePort =
        svc.getSpec().getPorts().stream()
            .filter(p -> p.getPort() == port)
            .findFirst()
            .orElseThrow(() -> new AssertionError("no port " + port + " on " + host));
    Pod pod =
        client
            .pods()
            .inNamespace(nameAndNamespace[1])
            .withLabels(svc.getSpec().getSelector())
            .list()
            .getItems()
            .stream()
            .filter(SnapshotMetadataE2E::ready)
            .findFirst()
            .orElseThrow(() -> new AssertionError("no ready pod behind " + host));
    forward =
        client
            .pods()
            .inNamespace(nameAndNamespace[1])
            .withName(pod.getMetadata().getName())
            .portForward(servicePort.getTargetPort().getIntVal());
    ChannelCredentials tls =
        TlsChannelCredentials.newBuilder()
            .trustManager(new ByteArrayInputStream(caCert().getBytes(StandardCharsets.US_ASCII)))
            .build();
    channel =
        Grpc.newChannelBuilderForAddress("127.0.0.1", forward.getLocalPort(), tls)
            .overrideAuthority(address)
            .build();
    return channel;
  }

  private static boolean ready(Pod pod) {
    return pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** The VolumeSnapshotContent bound to a VolumeSnapshot of the tests' namespace. */
  private GenericKubernetesResource content(String snapshot) {
    GenericKubernetesResource vs =
        client
            .genericKubernetesResources(Workloads.VOLUME_SNAPSHOTS)
            .inNamespace(APPS)
            .withName(snapshot)
            .get();
    String name = (String) Workloads.field(vs, "status", "boundVolumeSnapshotContentName");
    return client.genericKubernetesResources(SNAPSHOT_CONTENTS).withName(name).get();
  }

  /** A field of the SnapshotMetadataService named after the driver (iter.go, SmsCRClient.Get). */
  @SuppressWarnings("unchecked")
  private String spec(String field) {
    if (service == null) {
      service =
          client
              .genericKubernetesResources(SNAPSHOT_METADATA_SERVICES)
              .withName(DefaultInstall.DRIVER)
              .get();
      assertThat(service).as("SnapshotMetadataService " + DefaultInstall.DRIVER).isNotNull();
    }
    return (String)
        ((Map<String, Object>) service.getAdditionalProperties().get("spec")).get(field);
  }

  /** caCert is bytes in the API: base64 in the object, PEM once decoded. */
  private String caCert() {
    return decode(spec("caCert"));
  }

  private static String decode(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.US_ASCII);
  }

  /** A complete answer's ranges: each within the device, in offset order, none overlapping. */
  private static void assertInOrderAndApart(List<BlockMetadata> ranges) {
    long end = 0;
    for (BlockMetadata r : ranges) {
      assertThat(r.getSizeBytes()).as("%s", r).isPositive();
      assertThat(r.getByteOffset())
          .as("%s after %d in %s", r, end, ranges)
          .isGreaterThanOrEqualTo(end);
      end = r.getByteOffset() + r.getSizeBytes();
      assertThat(end).as("%s within the device", r).isLessThanOrEqualTo(CAPACITY);
    }
  }

  /** How many bytes of [offset, offset + length) the ranges cover (they do not overlap). */
  private static long covered(List<BlockMetadata> ranges, long offset, long length) {
    long sum = 0;
    for (BlockMetadata r : ranges) {
      long from = Math.max(offset, r.getByteOffset());
      long to = Math.min(offset + length, r.getByteOffset() + r.getSizeBytes());
      sum += Math.max(0, to - from);
    }
    return sum;
  }

  private static long total(List<BlockMetadata> ranges) {
    return ranges.stream().mapToLong(BlockMetadata::getSizeBytes).sum();
  }
}

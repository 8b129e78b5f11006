package dev.soko.operator.model;

import dev.soko.api.v1alpha1.ControllerSpec;
import dev.soko.api.v1alpha1.FeatureState;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.SubjectBuilder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Changed block tracking for backup tools: the snapshot metadata sidecar
 * (external-snapshot-metadata v1.0.0) in the controller pod, in front of the controller-mode
 * driver's socket, with what it needs around it: a Service, a TLS Secret of the operator's CA, the
 * cluster-scoped SnapshotMetadataService object that tells backup applications where and how to
 * connect, the sidecar's RBAC under the controller's ServiceAccount, and a ClusterRole for backup
 * applications to bind (docs/backups.md).
 */
public final class SnapshotMetadata {
  /** The SnapshotMetadataService CRD's resource: an add-on CRD, found by discovery. */
  public static final String API = "cbt.storage.k8s.io/v1beta1/snapshotmetadataservices";

  /**
   * The audience a backup application's token must carry: the SnapshotMetadataService's
   * spec.audience, which the sidecar asks TokenReview to check (v1.0.0 reads it from the object and
   * ignores its --audience flag). Fixed, so that a backup tool can be configured once.
   */
  public static final String AUDIENCE = "soko.dev/snapshot-metadata";

  /** The sidecar's TLS gRPC port (its --port default). */
  static final int GRPC_PORT = 50051;

  /** The Service's port, as in the upstream example (csi-driver-service.yaml). */
  static final int SERVICE_PORT = 6443;

  /**
   * The sidecar's /health (and metrics) port: the sidecar always starts this server and exits when
   * it cannot bind, so it must differ from every other port of the controller pod (9808 health,
   * 9811 resizer, 9812 health monitor, the driver's metricsPort).
   */
  static final int HTTP_PORT = 9814;

  static final String COMPONENT = "snapshot-metadata";
  static final String TLS_VOLUME = "snapshot-metadata-tls";

  /**
   * A directory of its own, not a subPath: the sidecar watches the two files and serves a renewed
   * certificate on the next handshake, which only a whole Secret volume's updates reach.
   */
  static final String TLS_DIR = "/etc/soko/snapshot-metadata-tls";

  private static final String CBT_GROUP = "cbt.storage.k8s.io";
  private static final String SNAPSHOT_GROUP = "snapshot.storage.k8s.io";
  private static final List<String> GET_LIST = List.of("get", "list");

  private SnapshotMetadata() {}

  /**
   * Whether the sidecar runs, and why not.
   *
   * @param reason {@code Running}, {@code Disabled}, {@code SnapshotsDisabled}, {@code
   *     NotInVersionsTable}, {@code ApiNotServed} or {@code DriverNotServing}
   */
  public record Verdict(boolean runs, String reason, String message) {
    public FeatureState state() {
      return new FeatureState(runs, reason, message);
    }
  }

  /**
   * @param snapshots whether snapshots run ({@link DesiredState#snapshotsEnabled})
   */
  static Verdict verdict(
      StorageClusterSpec spec,
      ClusterFacts facts,
      VersionsTable.Row row,
      ResolvedImages images,
      boolean snapshots) {
    if (!Boolean.TRUE.equals(spec.getFeatures().getChangedBlockTracking())) {
      return new Verdict(false, "Disabled", "spec.features.changedBlockTracking is false");
    }
    if (!snapshots) {
      return new Verdict(
          false,
          "SnapshotsDisabled",
          "snapshots are off (spec.snapshots.enabled, or the cluster does not serve the snapshot"
              + " API): there is nothing to compare");
    }
    if (images.get(Component.SNAPSHOT_METADATA) == null) {
      return new Verdict(
          false,
          "NotInVersionsTable",
          "the versions table's sidecars for Kubernetes "
              + facts.version().minorVersion()
              + " include no csi-snapshot-metadata");
    }
    List<String> missing =
        row.apisOf(Component.SNAPSHOT_METADATA).stream().filter(a -> !facts.serves(a)).toList();
    if (!missing.isEmpty()) {
      return new Verdict(
          false,
          "ApiNotServed",
          "the cluster does not serve "
              + String.join(", ", missing)
              + ": install the SnapshotMetadataService CRD (snapshotmetadataservices."
              + CBT_GROUP
              + ") to turn it on");
    }
    if (!controllerServes(images)) {
      return new Verdict(
          false,
          "DriverNotServing",
          "the driver image "
              + images.get(Component.DRIVER)
              + " is a release whose controller-mode driver does not serve the CSI"
              + " SnapshotMetadata service, which the sidecar requires");
    }
    return new Verdict(
        true, "Running", "csi-snapshot-metadata serves " + CBT_GROUP + " in the controller pod");
  }

  /**
   * Whether the controller-mode driver serves the CSI SnapshotMetadata service and advertises
   * SNAPSHOT_METADATA_SERVICE: a driver of the release with the data path relays the calls to the
   * snapshot's node over it (the relay comes with the data path's certificates, which the render
   * mounts for that release, and with SOKO_STORAGE_CLUSTER). The sidecar requires both: without
   * them it exits after its start (pkg/sidecar/sidecar.go at v1.0.0) and restarts for ever, which
   * would keep the controller pod from being Ready; so an older pinned driver gets no sidecar.
   */
  static boolean controllerServes(ResolvedImages images) {
    return DataTls.rendered(images);
  }

  static String serviceName(Names n) {
    return n.workload(COMPONENT);
  }

  /** The sidecar's TLS Secret: tls.crt, tls.key and the CA bundle in ca.crt. */
  public static String secretName(Names n) {
    return n.workload(COMPONENT + "-tls");
  }

  /** The host the backup application dials and the certificate names: the Service's. */
  static String host(Names n) {
    return serviceName(n) + "." + n.namespace();
  }

  /** The names a client may reach the Service by, all of them in the certificate. */
  static List<String> dnsNames(Names n) {
    return List.of(host(n), host(n) + ".svc", host(n) + ".svc.cluster.local");
  }

  /** The sidecar in the controller pod, next to the controller-mode driver's socket. */
  static Container sidecar(StorageClusterSpec spec, ResolvedImages images, ControllerSpec ctrl) {
    return Containers.sidecar(Component.SNAPSHOT_METADATA, images, spec, ctrl)
        .withArgs(
            "--csi-address=" + Containers.SOCKET,
            "--tls-cert=" + TLS_DIR + "/tls.crt",
            "--tls-key=" + TLS_DIR + "/tls.key",
            "--port=" + GRPC_PORT,
            // All interfaces of the pod: the kubelet probes the pod IP.
            "--http-endpoint=:" + HTTP_PORT,
            "--v=2")
        .addToVolumeMounts(
            new VolumeMountBuilder()
                .withName(TLS_VOLUME)
                .withMountPath(TLS_DIR)
                .withReadOnly(true)
                .build())
        .withPorts(
            new ContainerPortBuilder()
                .withName("cbt-grpc")
                .withContainerPort(GRPC_PORT)
                .withProtocol("TCP")
                .build(),
            new ContainerPortBuilder()
                .withName("cbt-http")
                .withContainerPort(HTTP_PORT)
                .withProtocol("TCP")
                .build())
        // /health answers 200 once the sidecar has validated the driver, 503 before; a sidecar
        // that never gets there is restarted.
        .withLivenessProbe(
            new ProbeBuilder()
                .withNewHttpGet()
                .withPath("/health")
                .withNewPort("cbt-http")
                .endHttpGet()
                .withInitialDelaySeconds(10)
                .withPeriodSeconds(20)
                .withTimeoutSeconds(10)
                .withFailureThreshold(3)
                .build())
        .build();
  }

  /** The TLS Secret as a volume of the controller pod. */
  static Volume tlsVolume(Names n) {
    return new VolumeBuilder()
        .withName(TLS_VOLUME)
        .withNewSecret()
        .withSecretName(secretName(n))
        .endSecret()
        .build();
  }

  /**
   * Everything but the container: the TLS Secret, the Service, the SnapshotMetadataService object,
   * the sidecar's RBAC and the backup applications' ClusterRole. Without a CA ({@link
   * ServingCertificates#NONE}, the offline render) the Secret and the SnapshotMetadataService,
   * which carry the certificate and its CA, are left out.
   */
  static List<HasMetadata> objects(
      Names n, StorageClusterSpec spec, ServingCertificates certificates) {
    Optional<ServingCertificates.ServingCertificate> cert =
        certificates.issue(host(n), dnsNames(n));
    List<HasMetadata> out = new ArrayList<>();
    cert.ifPresent(c -> out.add(secret(n, c)));
    out.add(service(n));
    cert.ifPresent(
        c -> out.add(snapshotMetadataService(n, spec.getDriver().getName(), c.caBundle())));
    out.add(clusterRole(n, COMPONENT, sidecarRules()));
    out.add(
        new ClusterRoleBindingBuilder()
            .withMetadata(Rbac.meta(n, n.clusterRole(COMPONENT), null, Names.CONTROLLER))
            .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", n.clusterRole(COMPONENT))
            .withSubjects(
                new SubjectBuilder()
                    .withKind("ServiceAccount")
                    .withName(n.serviceAccount(Names.CONTROLLER))
                    .withNamespace(n.namespace())
                    .build())
            .build());
    out.add(clusterRole(n, COMPONENT + "-client", clientRules()));
    return out;
  }

  private static HasMetadata secret(Names n, ServingCertificates.ServingCertificate cert) {
    Map<String, String> data = new LinkedHashMap<>();
    data.put("tls.crt", base64(cert.certificate()));
    data.put("tls.key", base64(cert.privateKey()));
    data.put("ca.crt", base64(cert.caBundle()));
    return new SecretBuilder()
        .withMetadata(Rbac.meta(n, secretName(n), n.namespace(), Names.CONTROLLER))
        .withType("kubernetes.io/tls")
        .withData(data)
        .build();
  }

  private static HasMetadata service(Names n) {
    return new ServiceBuilder()
        .withMetadata(Rbac.meta(n, serviceName(n), n.namespace(), Names.CONTROLLER))
        .withNewSpec()
        .withType("ClusterIP")
        .withSelector(n.selector(Names.CONTROLLER))
        .withPorts(
            new ServicePortBuilder()
                .withName("grpc")
                .withPort(SERVICE_PORT)
                .withNewTargetPort(GRPC_PORT)
                .withProtocol("TCP")
                .build())
        .endSpec()
        .build();
  }

  /**
   * Named after the driver: the sidecar and the backup application's client both find it by the CSI
   * driver's name. caCert is the CA bundle that signed the sidecar's certificate.
   */
  private static GenericKubernetesResource snapshotMetadataService(
      Names n, String driver, String caBundle) {
    GenericKubernetesResource sms = new GenericKubernetesResource();
    sms.setApiVersion(CBT_GROUP + "/v1beta1");
    sms.setKind("SnapshotMetadataService");
    sms.setMetadata(Rbac.meta(n, driver, null, Names.CONTROLLER));
    Map<String, Object> specMap = new LinkedHashMap<>();
    specMap.put("address", host(n) + ":" + SERVICE_PORT);
    specMap.put("caCert", base64(caBundle));
    specMap.put("audience", AUDIENCE);
    sms.setAdditionalProperty("spec", specMap);
    return sms;
  }

  /**
   * What the sidecar calls (v1.0.0): TokenReview and SubjectAccessReview for every caller, its
   * SnapshotMetadataService for the audience, the snapshot and its content to find the handle, and
   * the snapshot's class for the snapshotter secret (get when the snapshot names it, list for the
   * default), which the upstream sample role lacks. No secrets: Soko's snapshot classes name no
   * snapshotter secret.
   */
  static List<PolicyRule> sidecarRules() {
    return List.of(
        rule("authentication.k8s.io", List.of("tokenreviews"), List.of("create")),
        rule("authorization.k8s.io", List.of("subjectaccessreviews"), List.of("create")),
        rule(CBT_GROUP, List.of("snapshotmetadataservices"), GET_LIST),
        rule(
            SNAPSHOT_GROUP,
            List.of("volumesnapshots", "volumesnapshotcontents", "volumesnapshotclasses"),
            GET_LIST));
  }

  /**
   * The upstream client role (deploy/snapshot-metadata-client-cluster-role.yaml at v1.0.0) but for
   * its {@code serviceaccounts/token create}: granting that cluster-wide would let every bound
   * application mint tokens of any ServiceAccount, and the operator would have to hold it too. A
   * backup application gets its token for its own account as docs/backups.md says.
   */
  static List<PolicyRule> clientRules() {
    return List.of(
        rule(
            SNAPSHOT_GROUP,
            List.of("volumesnapshots", "volumesnapshotcontents"),
            List.of("get", "list", "watch")),
        rule(CBT_GROUP, List.of("snapshotmetadataservices"), GET_LIST));
  }

  private static HasMetadata clusterRole(Names n, String role, List<PolicyRule> rules) {
    return new ClusterRoleBuilder()
        .withMetadata(Rbac.meta(n, n.clusterRole(role), null, Names.CONTROLLER))
        .withRules(rules)
        .build();
  }

  private static PolicyRule rule(String group, List<String> resources, List<String> verbs) {
    return new PolicyRuleBuilder()
        .withApiGroups(group)
        .withResources(resources)
        .withVerbs(verbs)
        .build();
  }

  private static String base64(String pem) {
    return Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.UTF_8));
  }
}

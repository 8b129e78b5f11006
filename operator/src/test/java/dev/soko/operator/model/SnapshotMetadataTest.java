package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The render of changed block tracking: the sidecar, its Service, certificate, object and RBAC. */
class SnapshotMetadataTest {
  private static final VersionsTable TABLE = VersionsTable.load();
  private static final Set<String> SNAPSHOT_APIS =
      Set.of(
          ClusterFacts.VOLUME_SNAPSHOT_CLASSES,
          "snapshot.storage.k8s.io/v1/volumesnapshotcontents",
          "snapshot.storage.k8s.io/v1/volumesnapshots");

  private static Set<String> with(Set<String> apis, String... more) {
    Set<String> out = new HashSet<>(apis);
    out.addAll(List.of(more));
    return out;
  }

  private static StorageCluster sample() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setEnabled(true);
    return sc;
  }

  /** A cluster that serves everything, with this release's driver. */
  private static DesiredState running(StorageCluster sc, ServingCertificates certificates) {
    return DesiredState.of(
        sc,
        TABLE,
        Fixtures.serving("1.34", with(SNAPSHOT_APIS, SnapshotMetadata.API)),
        certificates);
  }

  private static <T> T only(DesiredState d, Class<T> type) {
    List<T> found = d.all().stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as(type.getSimpleName()).hasSize(1);
    return found.get(0);
  }

  private static List<HasMetadata> named(DesiredState d, String fragment) {
    return d.all().stream().filter(o -> o.getMetadata().getName().contains(fragment)).toList();
  }

  @Test
  void theSidecarTalksToTheControllersSocketAndServesTlsFromTheMountedSecret() {
    DesiredState d = running(sample(), new SelfSignedServingCertificates());
    PodSpec pod = Fixtures.controllerPod(d);
    Container sidecar = Fixtures.container(pod, "csi-snapshot-metadata");
    assertThat(sidecar.getImage()).endsWith("sig-storage/csi-snapshot-metadata:v1.0.0");
    assertThat(sidecar.getArgs())
        .containsExactly(
            "--csi-address=/csi/csi.sock",
            "--tls-cert=/etc/soko/snapshot-metadata-tls/tls.crt",
            "--tls-key=/etc/soko/snapshot-metadata-tls/tls.key",
            "--port=50051",
            "--http-endpoint=:9814",
            "--v=2");
    assertThat(sidecar.getVolumeMounts())
        .extracting(VolumeMount::getName, VolumeMount::getMountPath, VolumeMount::getReadOnly)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("socket-dir", "/csi", null),
            org.assertj.core.groups.Tuple.tuple(
                "snapshot-metadata-tls", "/etc/soko/snapshot-metadata-tls", true));
    Volume tls =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals("snapshot-metadata-tls"))
            .findFirst()
            .orElseThrow();
    assertThat(tls.getSecret().getSecretName()).isEqualTo("fast-snapshot-metadata-tls");
    assertThat(sidecar.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health");
    assertThat(sidecar.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("cbt-http");
    assertThat(sidecar.getPorts())
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("cbt-http");
              assertThat(p.getContainerPort()).isEqualTo(9814);
            });
    assertThat(d.images().byContainerName())
        .containsEntry("csi-snapshot-metadata", sidecar.getImage());
    assertThat(d.changedBlockTracking().runs()).isTrue();
    assertThat(d.changedBlockTracking().reason()).isEqualTo("Running");
  }

  @Test
  void noPortOfTheControllerPodIsUsedTwice() {
    StorageCluster sc = sample();
    sc.getSpec().getDriver().setMetricsPort(9810);
    PodSpec pod = Fixtures.controllerPod(running(sc, new SelfSignedServingCertificates()));
    List<Integer> ports =
        pod.getContainers().stream()
            .flatMap(c -> c.getPorts().stream())
            .map(p -> p.getContainerPort())
            .toList();
    assertThat(ports).doesNotHaveDuplicates().contains(9814, 50051);
  }

  @Test
  void aMetricsPortOnTheSidecarsPortsIsRefused() {
    for (int port : List.of(9814, 50051)) {
      StorageCluster sc = sample();
      sc.getSpec().getDriver().setMetricsPort(port);
      assertThat(SpecValidator.problems(sc.getSpec()))
          .anySatisfy(p -> assertThat(p).contains(String.valueOf(port), "csi-snapshot-metadata"));
    }
  }

  @Test
  void theServiceSendsPort6443ToTheControllerPodsSidecar() {
    DesiredState d = running(sample(), new SelfSignedServingCertificates());
    Service service = only(d, Service.class);
    assertThat(service.getMetadata().getName()).isEqualTo("fast-snapshot-metadata");
    assertThat(service.getMetadata().getNamespace()).isEqualTo("soko-fast");
    assertThat(service.getSpec().getPorts()).hasSize(1);
    assertThat(service.getSpec().getPorts().get(0).getPort()).isEqualTo(6443);
    assertThat(service.getSpec().getPorts().get(0).getTargetPort().getIntVal()).isEqualTo(50051);
    Map<String, String> podLabels =
        d.controllerDeployment().getSpec().getTemplate().getMetadata().getLabels();
    assertThat(podLabels).containsAllEntriesOf(service.getSpec().getSelector());
  }

  @Test
  void theObjectNamedAfterTheDriverPointsAtTheServiceWithTheCaThatSignedItsCertificate()
      throws Exception {
    DesiredState d = running(sample(), new SelfSignedServingCertificates());
    GenericKubernetesResource sms =
        d.all().stream()
            .filter(o -> o.getKind().equals("SnapshotMetadataService"))
            .map(GenericKubernetesResource.class::cast)
            .findFirst()
            .orElseThrow();
    assertThat(sms.getApiVersion()).isEqualTo("cbt.storage.k8s.io/v1beta1");
    assertThat(sms.getMetadata().getName()).isEqualTo("fast.csi.soko.dev");
    assertThat(sms.getMetadata().getNamespace()).isNull();
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) sms.getAdditionalProperties().get("spec");
    assertThat(spec)
        .containsEntry("address", "fast-snapshot-metadata.soko-fast:6443")
        .containsEntry("audience", SnapshotMetadata.AUDIENCE);

    Secret secret = only(d, Secret.class);
    assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");
    assertThat(secret.getMetadata().getName()).isEqualTo("fast-snapshot-metadata-tls");
    assertThat(secret.getData()).containsOnlyKeys("tls.crt", "tls.key", "ca.crt");
    X509Certificate ca = certificate(decode((String) spec.get("caCert")));
    assertThat(decode(secret.getData().get("ca.crt")))
        .isEqualTo(decode((String) spec.get("caCert")));
    X509Certificate served = certificate(decode(secret.getData().get("tls.crt")));
    served.verify(ca.getPublicKey()); // throws unless the CA in the object signed it
    assertThat(
            served.getSubjectAlternativeNames().stream().map(san -> (String) san.get(1)).toList())
        .containsExactlyInAnyOrder(
            "fast-snapshot-metadata.soko-fast",
            "fast-snapshot-metadata.soko-fast.svc",
            "fast-snapshot-metadata.soko-fast.svc.cluster.local");
    assertThat(decode(secret.getData().get("tls.key"))).contains("PRIVATE KEY");
  }

  @Test
  void theSidecarMayReviewCallersAndReadSnapshotsAndTheirClassesUnderTheControllersAccount() {
    DesiredState d = running(sample(), new SelfSignedServingCertificates());
    ClusterRole role =
        (ClusterRole)
            named(d, ":snapshot-metadata").stream()
                .filter(o -> o instanceof ClusterRole)
                .filter(o -> o.getMetadata().getName().endsWith(":snapshot-metadata"))
                .findFirst()
                .orElseThrow();
    assertThat(grants(role.getRules()))
        .containsExactlyInAnyOrder(
            "authentication.k8s.io/tokenreviews:create",
            "authorization.k8s.io/subjectaccessreviews:create",
            "cbt.storage.k8s.io/snapshotmetadataservices:get,list",
            "snapshot.storage.k8s.io/volumesnapshots:get,list",
            "snapshot.storage.k8s.io/volumesnapshotcontents:get,list",
            "snapshot.storage.k8s.io/volumesnapshotclasses:get,list");
    ClusterRoleBinding binding =
        d.all().stream()
            .filter(o -> o instanceof ClusterRoleBinding)
            .map(ClusterRoleBinding.class::cast)
            .filter(b -> b.getRoleRef().getName().equals(role.getMetadata().getName()))
            .findFirst()
            .orElseThrow();
    assertThat(binding.getSubjects()).hasSize(1);
    assertThat(binding.getSubjects().get(0).getName())
        .isEqualTo(Fixtures.controllerPod(d).getServiceAccountName());
    assertThat(binding.getSubjects().get(0).getNamespace()).isEqualTo("soko-fast");
  }

  @Test
  void backupApplicationsGetAClusterRoleToBindThatNobodyIsBoundTo() {
    DesiredState d = running(sample(), new SelfSignedServingCertificates());
    ClusterRole client =
        d.all().stream()
            .filter(o -> o instanceof ClusterRole)
            .map(ClusterRole.class::cast)
            .filter(r -> r.getMetadata().getName().equals("soko:fast:snapshot-metadata-client"))
            .findFirst()
            .orElseThrow();
    assertThat(grants(client.getRules()))
        .containsExactlyInAnyOrder(
            "snapshot.storage.k8s.io/volumesnapshots:get,list,watch",
            "snapshot.storage.k8s.io/volumesnapshotcontents:get,list,watch",
            "cbt.storage.k8s.io/snapshotmetadataservices:get,list");
    assertThat(d.all())
        .filteredOn(o -> o instanceof ClusterRoleBinding)
        .map(o -> ((ClusterRoleBinding) o).getRoleRef().getName())
        .doesNotContain("soko:fast:snapshot-metadata-client");
  }

  @Test
  void switchedOffNothingIsRenderedAndTheStatusSaysSo() {
    StorageCluster sc = sample();
    sc.getSpec().getFeatures().setChangedBlockTracking(false);
    assertNothingRendered(running(sc, refusing()), "Disabled");
  }

  @Test
  void aClusterWithoutTheSnapshotMetadataServiceCrdGetsNoSidecarAndTheReasonNamesTheApi() {
    DesiredState d =
        DesiredState.of(sample(), TABLE, Fixtures.serving("1.34", SNAPSHOT_APIS), refusing());
    assertNothingRendered(d, "ApiNotServed");
    assertThat(d.changedBlockTracking().message()).contains(SnapshotMetadata.API);
  }

  @Test
  void withoutSnapshotsThereIsNoSidecar() {
    StorageCluster sc = sample();
    sc.getSpec().getSnapshots().setEnabled(false);
    assertNothingRendered(running(sc, refusing()), "SnapshotsDisabled");
  }

  @Test
  void rowsWithoutTheSidecarResolveNoImageForIt() {
    DesiredState d =
        DesiredState.of(
            sample(),
            TABLE,
            Fixtures.serving("1.31", with(SNAPSHOT_APIS, SnapshotMetadata.API)),
            refusing());
    assertNothingRendered(d, "NotInVersionsTable");
    assertThat(d.images().get(Component.SNAPSHOT_METADATA)).isNull();
  }

  @Test
  void aPinnedDriverOlderThanTheRelayGetsNoSidecarAndNoCertificate() {
    StorageCluster sc = sample();
    sc.getSpec().getDriver().setImage("soko.local/soko-driver:0.1.0");
    DesiredState d = running(sc, refusing());
    assertNothingRendered(d, "DriverNotServing");
    assertThat(d.changedBlockTracking().message())
        .contains("soko.local/soko-driver:0.1.0", "SnapshotMetadata");
  }

  @Test
  void thisReleasesDriverServesItSoTheDefaultInstallRunsTheSidecar() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setEnabled(true);
    assertThat(sc.getSpec().getFeatures().getChangedBlockTracking()).as("the default").isTrue();
    DesiredState d = running(sc, new SelfSignedServingCertificates());
    assertThat(d.changedBlockTracking().state().running()).isTrue();
    assertThat(d.changedBlockTracking().state().reason()).isEqualTo("Running");
    assertThat(Fixtures.controllerPod(d).getContainers())
        .extracting(Container::getName)
        .contains("csi-snapshot-metadata");
  }

  /**
   * The offline render has no CA: it prints the sidecar, its Service and RBAC, and leaves out the
   * Secret and the SnapshotMetadataService, which carry the certificate and its CA.
   */
  @Test
  void theOfflineRenderPrintsNoKeyAndNoCa() {
    DesiredState d = Fixtures.desired(sample(), "1.34");
    assertThat(d.changedBlockTracking().runs()).isTrue();
    assertThat(Fixtures.controllerPod(d).getContainers())
        .extracting(Container::getName)
        .contains("csi-snapshot-metadata");
    assertThat(d.snapshotMetadata())
        .extracting(HasMetadata::getKind)
        .containsExactly("Service", "ClusterRole", "ClusterRoleBinding", "ClusterRole");
    assertThat(d.all()).noneMatch(o -> o instanceof Secret);
  }

  private static void assertNothingRendered(DesiredState d, String reason) {
    assertThat(d.changedBlockTracking().runs()).isFalse();
    assertThat(d.changedBlockTracking().reason()).isEqualTo(reason);
    assertThat(d.changedBlockTracking().state().running()).isFalse();
    assertThat(Fixtures.controllerPod(d).getContainers())
        .extracting(Container::getName)
        .doesNotContain("csi-snapshot-metadata");
    assertThat(Fixtures.controllerPod(d).getVolumes())
        .extracting(Volume::getName)
        .doesNotContain(SnapshotMetadata.TLS_VOLUME);
    assertThat(d.snapshotMetadata()).isEmpty();
    assertThat(d.all())
        .noneMatch(o -> o.getMetadata().getName().contains("snapshot-metadata"))
        .noneMatch(o -> o instanceof Service || o instanceof Secret);
  }

  /** A CA that must not be asked: the render issues no certificate it does not deploy. */
  private static ServingCertificates refusing() {
    return (cn, names) -> {
      throw new AssertionError("asked for a certificate of " + cn);
    };
  }

  private static Set<String> grants(List<PolicyRule> rules) {
    return rules.stream()
        .flatMap(
            r ->
                r.getApiGroups().stream()
                    .flatMap(
                        g ->
                            r.getResources().stream()
                                .map(res -> g + "/" + res + ":" + String.join(",", r.getVerbs()))))
        .collect(Collectors.toSet());
  }

  private static String decode(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
  }

  private static X509Certificate certificate(String pem) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.UTF_8)));
  }
}

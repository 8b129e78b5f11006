package dev.soko.operator.datatls;

import static dev.soko.operator.datatls.DataTlsCertificatesTest.N;
import static dev.soko.operator.datatls.DataTlsCertificatesTest.SERVER_AUTH;
import static dev.soko.operator.datatls.DataTlsCertificatesTest.T0;
import static dev.soko.operator.datatls.DataTlsCertificatesTest.only;
import static dev.soko.operator.datatls.DataTlsCertificatesTest.renewAt;
import static dev.soko.operator.datatls.DataTlsCertificatesTest.secret;
import static dev.soko.operator.datatls.DataTlsCertificatesTest.text;
import static dev.soko.operator.datatls.DataTlsCertificatesTest.validate;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.model.ServingCertificates.ServingCertificate;
import dev.soko.operator.model.SnapshotMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;

/**
 * The snapshot metadata sidecar's serving certificate, by the data path's CA and under its rules:
 * kept byte for byte while valid, renewed at two thirds of its life, issued anew for a damaged
 * Secret or other names, and a CA rotation that reaches its bundle before it moves the certificate.
 */
class KeptServingCertificatesTest {
  static final String CN = "fast-snapshot-metadata.soko-fast";
  static final List<String> NAMES = List.of(CN, CN + ".svc", CN + ".svc.cluster.local");

  final DataTlsCertificates certificates = new DataTlsCertificates(Duration.ofMinutes(10));

  /** One reconcile: the Secrets it applies and the certificate the render asked for. */
  record Round(DataTlsCertificates.Desired desired, ServingCertificate served) {
    /** Every Secret as the API server returns it, the sidecar's as the render shapes it. */
    Map<String, Secret> stored() {
      Map<String, Secret> out = new HashMap<>(DataTlsCertificatesTest.stored(desired));
      out.put(SnapshotMetadata.secretName(N), servingSecret(served));
      return out;
    }
  }

  Round reconcile(Map<String, Secret> stored, Instant now) {
    DataTlsCertificates.Desired d = certificates.desired(N, stored, now);
    return new Round(d, d.serving().issue(CN, NAMES).orElseThrow());
  }

  @Test
  void aServingCertificateOfTheCaForTheServicesNames() throws Exception {
    Round r = reconcile(Map.of(), T0);
    X509Certificate served = only(r.served().certificate());
    X509Certificate ca = only(text(secret(r.desired(), N.dataCa()), "ca.crt"));
    assertThat(r.served().caBundle()).isEqualTo(text(secret(r.desired(), N.dataCa()), "ca.crt"));
    validate(served, r.served().caBundle(), T0);
    assertThat(served.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
    assertThat(served.getSubjectX500Principal())
        .isEqualTo(new X500Principal("CN=" + CN + ", O=soko.dev"));
    assertThat(served.getSubjectAlternativeNames().stream().map(n -> (String) n.get(1)).toList())
        .containsExactlyInAnyOrderElementsOf(NAMES);
    assertThat(served.getExtendedKeyUsage()).as("a server only").containsExactly(SERVER_AUTH);
    assertThat(served.getBasicConstraints()).as("not a CA").isEqualTo(-1);
    assertThat(Credential.read(r.served().certificate(), r.served().privateKey())).isPresent();
    assertThat(r.desired().nextChange())
        .as("the serving certificate's renewal counts once it is asked for")
        .isEqualTo(renewAt(served));
  }

  @Test
  void nothingIsIssuedUnlessTheRenderAsks() {
    DataTlsCertificates.Desired d = certificates.desired(N, Map.of(), T0);
    assertThat(d.serving().nextChange()).isEmpty();
    assertThat(d.nextChange()).isEqualTo(d.dataPathChange());
  }

  @Test
  void validMaterialIsKeptByteForByteAndAskingTwiceAnswersTheSame() {
    Round first = reconcile(Map.of(), T0);
    assertThat(first.desired().serving().issue(CN, NAMES)).contains(first.served());
    Round again = reconcile(first.stored(), T0.plus(Duration.ofDays(19)));
    assertThat(again.served()).isEqualTo(first.served());
    assertThat(servingSecret(again.served())).isEqualTo(servingSecret(first.served()));
  }

  @Test
  void renewedAtTwoThirdsOfItsLifeByTheSameCa() {
    Round first = reconcile(Map.of(), T0);
    Instant due = renewAt(only(first.served().certificate()));
    assertThat(reconcile(first.stored(), due.minusSeconds(1)).served()).isEqualTo(first.served());
    Round renewed = reconcile(first.stored(), due);
    assertThat(renewed.served().privateKey()).isNotEqualTo(first.served().privateKey());
    assertThat(renewed.served().caBundle()).isEqualTo(first.served().caBundle());
    assertThat(only(renewed.served().certificate()).getNotBefore().toInstant())
        .isEqualTo(due.minus(Issuer.BACKDATE));
  }

  @Test
  void aDamagedSecretOrOtherNamesAreIssuedAnew() throws Exception {
    Round first = reconcile(Map.of(), T0);
    Map<String, Secret> damaged = first.stored();
    Secret broken = damaged.get(SnapshotMetadata.secretName(N)).toBuilder().build();
    broken.setData(new HashMap<>(broken.getData()));
    broken.getData().put("tls.key", "bm90IGEga2V5");
    damaged.put(SnapshotMetadata.secretName(N), broken);
    ServingCertificate healed = reconcile(damaged, T0.plusSeconds(60)).served();
    assertThat(healed.certificate()).isNotEqualTo(first.served().certificate());
    validate(only(healed.certificate()), first.served().caBundle(), T0.plusSeconds(60));

    DataTlsCertificates.Desired d = certificates.desired(N, first.stored(), T0.plusSeconds(60));
    ServingCertificate renamed = d.serving().issue(CN, List.of(CN, "other.example")).orElseThrow();
    assertThat(renamed.certificate()).isNotEqualTo(first.served().certificate());
    assertThat(
            only(renamed.certificate()).getSubjectAlternativeNames().stream()
                .map(n -> (String) n.get(1))
                .toList())
        .containsExactlyInAnyOrder(CN, "other.example");
  }

  /**
   * A new CA reaches the bundle (the SnapshotMetadataService's caCert) at once, beside the old one;
   * the certificate moves to the new CA when the components' do, and a client holding either bundle
   * trusts it throughout.
   */
  @Test
  void aCaRotationReachesTheBundleBeforeTheCertificateMoves() throws Exception {
    Round state = reconcile(Map.of(), T0);
    X509Certificate oldCa = only(text(secret(state.desired(), N.dataCa()), "ca.crt"));
    Instant caRenewal = renewAt(oldCa);
    while (state.desired().nextChange().isBefore(caRenewal)) {
      state = reconcile(state.stored(), state.desired().nextChange());
    }
    ServingCertificate before = state.served();

    state = reconcile(state.stored(), caRenewal);
    X509Certificate newCa = only(text(secret(state.desired(), N.dataCa()), "ca.crt"));
    assertThat(Pem.certificates(state.served().caBundle())).containsExactly(newCa, oldCa);
    assertThat(state.served().certificate()).isEqualTo(before.certificate());
    assertThat(state.served().privateKey()).isEqualTo(before.privateKey());

    Instant propagated = caRenewal.plus(Authority.PROPAGATION);
    state = reconcile(state.stored(), propagated);
    X509Certificate moved = only(state.served().certificate());
    assertThat(moved.getIssuerX500Principal()).isEqualTo(newCa.getSubjectX500Principal());
    validate(moved, state.served().caBundle(), propagated);
    validate(only(before.certificate()), state.served().caBundle(), propagated);
  }

  /** The Secret as SnapshotMetadata shapes it: PEM values as base64 data. */
  static Secret servingSecret(ServingCertificate c) {
    return new SecretBuilder()
        .withNewMetadata()
        .withName(SnapshotMetadata.secretName(N))
        .withNamespace(N.namespace())
        .endMetadata()
        .withType("kubernetes.io/tls")
        .withData(
            Map.of(
                "tls.crt", base64(c.certificate()),
                "tls.key", base64(c.privateKey()),
                "ca.crt", base64(c.caBundle())))
        .build();
  }

  private static String base64(String pem) {
    return Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.UTF_8));
  }
}

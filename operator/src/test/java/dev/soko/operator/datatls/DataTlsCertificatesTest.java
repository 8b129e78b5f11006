package dev.soko.operator.datatls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertPathValidator;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;

/**
 * The data path's certificates as the reconcile sees them over time: issued into empty Secrets,
 * kept while valid, each renewed at two thirds of its validity, and a CA rotation that leaves both
 * CAs trusted until the old one expires. Time is passed in, so a year runs in a test.
 */
class DataTlsCertificatesTest {
  static final Names N = new Names("fast", "soko-fast");
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
  static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

  final DataTlsCertificates certificates = new DataTlsCertificates(Duration.ofMinutes(10));

  @Test
  void issuesACaAndOneCertificatePerComponentSignedByIt() throws Exception {
    DataTlsCertificates.Desired d = certificates.desired(N, Map.of(), T0);

    assertThat(d.secrets())
        .extracting(s -> s.getMetadata().getName())
        .containsExactly("fast-data-ca", "fast-node-data-tls", "fast-controller-data-tls");
    assertThat(d.secrets()).allMatch(s -> s.getMetadata().getNamespace().equals("soko-fast"));
    Secret caSecret = secret(d, N.dataCa());
    assertThat(caSecret.getType()).isEqualTo("Opaque");
    assertThat(caSecret.getData()).containsOnlyKeys("ca.crt", "ca.key");
    X509Certificate ca = only(text(caSecret, "ca.crt"));
    assertThat(ca.getBasicConstraints()).as("a CA").isGreaterThanOrEqualTo(0);
    assertThat(ca.getKeyUsage())
        .as("keyCertSign only")
        .containsExactly(false, false, false, false, false, true, false, false, false);
    assertThat(validity(ca)).isEqualTo(Duration.ofDays(365).plus(Issuer.BACKDATE));
    assertThat(ca.getSubjectX500Principal()).isEqualTo(ca.getIssuerX500Principal());
    assertP256(ca);

    for (String component : List.of("node", "controller")) {
      Secret s = secret(d, N.dataTls(component));
      assertThat(s.getType()).isEqualTo("kubernetes.io/tls");
      assertThat(s.getData()).containsOnlyKeys("tls.crt", "tls.key", "ca.crt");
      assertThat(s.getMetadata().getLabels())
          .containsEntry(Names.LABEL_CLUSTER, "fast")
          .containsEntry("app.kubernetes.io/component", component);
      X509Certificate leaf = only(text(s, "tls.crt"));
      assertThat(text(s, "ca.crt")).isEqualTo(text(caSecret, "ca.crt"));
      assertThatCode(() -> leaf.verify(ca.getPublicKey())).doesNotThrowAnyException();
      assertThat(leaf.getSubjectX500Principal())
          .isEqualTo(new X500Principal("CN=soko-" + component + ", O=soko.dev"));
      assertThat(leaf.getExtendedKeyUsage()).containsExactlyInAnyOrder(SERVER_AUTH, CLIENT_AUTH);
      assertThat(leaf.getBasicConstraints()).as("not a CA").isEqualTo(-1);
      assertThat(leaf.getKeyUsage()[0]).as("digitalSignature").isTrue();
      assertThat(leaf.getKeyUsage()[5]).as("keyCertSign").isFalse();
      assertThat(validity(leaf)).isEqualTo(Duration.ofDays(30).plus(Issuer.BACKDATE));
      assertThat(leaf.getNotBefore().toInstant()).isEqualTo(T0.minus(Issuer.BACKDATE));
      assertP256(leaf);
      assertThat(Credential.read(text(s, "tls.crt"), text(s, "tls.key"))).isPresent();
      validate(leaf, text(s, "ca.crt"), T0);
    }
    assertThat(d.nextChange())
        .isEqualTo(renewAt(only(text(secret(d, N.dataTls("node")), "tls.crt"))));
  }

  @Test
  void aReconcileThatFindsValidMaterialChangesNothing() {
    DataTlsCertificates.Desired first = certificates.desired(N, Map.of(), T0);
    DataTlsCertificates.Desired again =
        certificates.desired(N, stored(first), T0.plus(Duration.ofDays(19)));
    assertThat(again.secrets()).isEqualTo(first.secrets());
    assertThat(again.nextChange()).isEqualTo(first.nextChange());
  }

  @Test
  void aComponentsCertificateIsRenewedAtTwoThirdsOfItsValidity() {
    DataTlsCertificates.Desired first = certificates.desired(N, Map.of(), T0);
    X509Certificate leaf = only(text(secret(first, N.dataTls("node")), "tls.crt"));
    Instant renewAt = renewAt(leaf);
    assertThat(Duration.between(T0, renewAt))
        .as("two thirds of 30 days and the five minutes it is backdated")
        .isEqualTo(Duration.ofDays(20).minus(Issuer.BACKDATE.dividedBy(3)));

    DataTlsCertificates.Desired before =
        certificates.desired(N, stored(first), renewAt.minusSeconds(1));
    assertThat(before.secrets()).isEqualTo(first.secrets());

    DataTlsCertificates.Desired after = certificates.desired(N, stored(first), renewAt);
    assertThat(secret(after, N.dataCa())).as("the CA stays").isEqualTo(secret(first, N.dataCa()));
    for (String component : List.of("node", "controller")) {
      Secret was = secret(first, N.dataTls(component));
      Secret now = secret(after, N.dataTls(component));
      assertThat(text(now, "tls.key")).as("a new key").isNotEqualTo(text(was, "tls.key"));
      assertThat(text(now, "tls.crt")).isNotEqualTo(text(was, "tls.crt"));
      assertThat(text(now, "ca.crt")).isEqualTo(text(was, "ca.crt"));
      assertThat(only(text(now, "tls.crt")).getNotBefore().toInstant())
          .isEqualTo(renewAt.minus(Issuer.BACKDATE));
    }
    assertThat(after.nextChange()).isAfter(renewAt.plus(Duration.ofDays(19)));
  }

  @Test
  void aNewCaIsTrustedEverywhereBeforeItSignsAndTheOldOneUntilItExpires() throws Exception {
    DataTlsCertificates.Desired state = certificates.desired(N, Map.of(), T0);
    X509Certificate oldCa = only(text(secret(state, N.dataCa()), "ca.crt"));
    Instant caRenewal = renewAt(oldCa);
    assertThat(Duration.between(T0, caRenewal).toDays()).isEqualTo(243);
    // Every renewal on time, as the requeue at nextChange brings it.
    while (state.nextChange().isBefore(caRenewal)) {
      state = certificates.desired(N, stored(state), state.nextChange());
      assertThat(only(text(secret(state, N.dataCa()), "ca.crt"))).isEqualTo(oldCa);
    }
    Secret oldNode = secret(state, N.dataTls("node"));
    Secret oldController = secret(state, N.dataTls("controller"));

    // First the new CA joins every ca.crt; the components keep their certificates of the old one.
    state = certificates.desired(N, stored(state), caRenewal);
    Secret caSecret = secret(state, N.dataCa());
    X509Certificate newCa = only(text(caSecret, "ca.crt"));
    assertThat(newCa).isNotEqualTo(oldCa);
    assertThat(newCa.getSubjectX500Principal()).isNotEqualTo(oldCa.getSubjectX500Principal());
    assertThat(only(text(caSecret, "retired-ca.crt"))).isEqualTo(oldCa);
    for (Secret old : List.of(oldNode, oldController)) {
      Secret s = secret(state, old.getMetadata().getName());
      assertThat(Pem.certificates(text(s, "ca.crt"))).containsExactly(newCa, oldCa);
      assertThat(text(s, "tls.crt")).isEqualTo(text(old, "tls.crt"));
      assertThat(text(s, "tls.key")).isEqualTo(text(old, "tls.key"));
    }
    Instant propagated = caRenewal.plus(Authority.PROPAGATION);
    assertThat(state.nextChange()).isEqualTo(propagated);
    assertThat(certificates.desired(N, stored(state), propagated.minusSeconds(1)).secrets())
        .isEqualTo(state.secrets());

    // Then the new CA re-issues them; a peer still holding the old files and one holding the new
    // trust each other's certificates.
    state = certificates.desired(N, stored(state), propagated);
    assertThat(secret(state, N.dataCa())).isEqualTo(caSecret);
    for (Secret old : List.of(oldNode, oldController)) {
      Secret s = secret(state, old.getMetadata().getName());
      X509Certificate leaf = only(text(s, "tls.crt"));
      assertThat(leaf.getIssuerX500Principal()).isEqualTo(newCa.getSubjectX500Principal());
      assertThat(text(s, "tls.key")).isNotEqualTo(text(old, "tls.key"));
      validate(leaf, text(s, "ca.crt"), propagated);
      validate(only(text(old, "tls.crt")), text(s, "ca.crt"), propagated);
    }
    X509Certificate newNode = only(text(secret(state, N.dataTls("node")), "tls.crt"));
    validate(newNode, text(secret(state, N.dataTls("controller")), "ca.crt"), propagated);

    // The overlap lasts until the old CA expires; then ca.crt holds the new CA alone.
    Instant oldExpiry = oldCa.getNotAfter().toInstant();
    while (state.nextChange().isBefore(oldExpiry)) {
      state = certificates.desired(N, stored(state), state.nextChange());
      assertThat(Pem.certificates(text(secret(state, N.dataTls("node")), "ca.crt")))
          .containsExactly(newCa, oldCa);
    }
    assertThat(state.nextChange()).isEqualTo(oldExpiry);
    state = certificates.desired(N, stored(state), oldExpiry);
    assertThat(secret(state, N.dataCa()).getData()).containsOnlyKeys("ca.crt", "ca.key");
    assertThat(only(text(secret(state, N.dataCa()), "ca.crt"))).isEqualTo(newCa);
    assertThat(Pem.certificates(text(secret(state, N.dataTls("node")), "ca.crt")))
        .containsExactly(newCa);
  }

  @Test
  void damagedOrForeignMaterialIsIssuedAnew() {
    DataTlsCertificates.Desired first = certificates.desired(N, Map.of(), T0);
    DataTlsCertificates.Desired other = certificates.desired(N, Map.of(), T0);
    Map<String, Secret> mixed = new HashMap<>(stored(first));
    // The node's certificate of another CA, the controller's key of another certificate.
    mixed.put(N.dataTls("node"), secret(other, N.dataTls("node")));
    Secret swapped = secret(first, N.dataTls("controller")).toBuilder().build();
    swapped.setData(new HashMap<>(swapped.getData()));
    swapped
        .getData()
        .put("tls.key", secret(other, N.dataTls("controller")).getData().get("tls.key"));
    mixed.put(N.dataTls("controller"), swapped);

    DataTlsCertificates.Desired healed = certificates.desired(N, mixed, T0.plusSeconds(60));
    assertThat(secret(healed, N.dataCa())).isEqualTo(secret(first, N.dataCa()));
    X509Certificate ca = only(text(secret(first, N.dataCa()), "ca.crt"));
    for (String component : List.of("node", "controller")) {
      Secret s = secret(healed, N.dataTls(component));
      assertThat(s).isNotEqualTo(secret(first, N.dataTls(component)));
      assertThatCode(() -> only(text(s, "tls.crt")).verify(ca.getPublicKey()))
          .doesNotThrowAnyException();
      assertThat(Credential.read(text(s, "tls.crt"), text(s, "tls.key"))).isPresent();
    }

    Secret garbage =
        secret(first, N.dataCa()).toBuilder()
            .withData(Map.of("ca.crt", "bm90IGEgY2VydA==", "ca.key", "%%"))
            .build();
    DataTlsCertificates.Desired fresh =
        certificates.desired(N, Map.of(N.dataCa(), garbage), T0.plusSeconds(60));
    assertThat(secret(fresh, N.dataCa()).getData()).containsOnlyKeys("ca.crt", "ca.key");
    assertThat(text(secret(fresh, N.dataCa()), "ca.crt"))
        .isNotEqualTo(text(secret(first, N.dataCa()), "ca.crt"));
  }

  @Test
  void theReconcileRequeuesForARenewalOnlyWhenItComesBeforeTheResync() {
    DataTlsCertificates.Desired d = certificates.desired(N, Map.of(), T0);
    assertThat(certificates.recheck(d, T0)).as("20 days away: the resync comes first").isNull();
    Instant due = d.nextChange();
    assertThat(certificates.recheck(d, due.minus(Duration.ofMinutes(3))))
        .isEqualTo(Duration.ofMinutes(3));
    assertThat(certificates.recheck(d, due.minus(Duration.ofMinutes(10)))).isNull();
    assertThat(certificates.recheck(d, due.plusSeconds(5))).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void aChainNotOfTheCaIsRefused() throws Exception {
    DataTlsCertificates.Desired a = certificates.desired(N, Map.of(), T0);
    DataTlsCertificates.Desired b = certificates.desired(N, Map.of(), T0);
    X509Certificate foreign = only(text(secret(b, N.dataTls("node")), "tls.crt"));
    assertThatThrownBy(() -> validate(foreign, text(secret(a, N.dataTls("node")), "ca.crt"), T0))
        .isInstanceOf(CertPathValidatorException.class);
  }

  /** The Secrets as the API server returns them to the cache. */
  static Map<String, Secret> stored(DataTlsCertificates.Desired d) {
    return d.secrets().stream().collect(Collectors.toMap(s -> s.getMetadata().getName(), s -> s));
  }

  static Secret secret(DataTlsCertificates.Desired d, String name) {
    return d.secrets().stream()
        .filter(s -> s.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  static String text(Secret s, String key) {
    return new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8);
  }

  static X509Certificate only(String pem) {
    try {
      List<X509Certificate> all = Pem.certificates(pem);
      assertThat(all).hasSize(1);
      return all.get(0);
    } catch (java.security.GeneralSecurityException e) {
      throw new AssertionError(e);
    }
  }

  static Instant renewAt(X509Certificate c) {
    return Credential.renewAt(c);
  }

  private static Duration validity(X509Certificate c) {
    return Duration.between(c.getNotBefore().toInstant(), c.getNotAfter().toInstant());
  }

  private static void assertP256(X509Certificate c) {
    assertThat(c.getPublicKey()).isInstanceOf(ECPublicKey.class);
    assertThat(((ECPublicKey) c.getPublicKey()).getParams().getCurve().getField().getFieldSize())
        .isEqualTo(256);
    assertThat(c.getSigAlgName()).isEqualTo("SHA256withECDSA");
  }

  /** PKIX path validation, as a peer's trust manager does it, against a ca.crt bundle. */
  static void validate(X509Certificate leaf, String bundle, Instant at) throws Exception {
    Set<TrustAnchor> anchors =
        Pem.certificates(bundle).stream()
            .map(c -> new TrustAnchor(c, null))
            .collect(Collectors.toSet());
    PKIXParameters params = new PKIXParameters(anchors);
    params.setRevocationEnabled(false);
    params.setDate(Date.from(at));
    CertPathValidator.getInstance("PKIX")
        .validate(CertificateFactory.getInstance("X.509").generateCertPath(List.of(leaf)), params);
  }
}

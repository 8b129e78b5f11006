package dev.soko.operator.model;

import java.io.StringWriter;
import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away CA for tests of the render: a new CA per instance that signs what it is asked for.
 * The operator's own CA (kept in a Secret, renewed: {@code datatls.KeptServingCertificates}) backs
 * {@link ServingCertificates} in the product; this one exists so the render's tests check real PEM.
 */
final class SelfSignedServingCertificates implements ServingCertificates {
  private final KeyPair caKey = ecKey();
  private final X509CertificateHolder ca =
      sign(new X500Name("CN=test-ca"), caKey, new X500Name("CN=test-ca"), caKey, List.of(), true);

  @Override
  public Optional<ServingCertificate> issue(String commonName, List<String> dnsNames) {
    KeyPair key = ecKey();
    X509CertificateHolder cert =
        sign(new X500Name("CN=" + commonName), key, ca.getSubject(), caKey, dnsNames, false);
    return Optional.of(new ServingCertificate(pem(cert), pem(key.getPrivate()), pem(ca)));
  }

  private static X509CertificateHolder sign(
      X500Name subject,
      KeyPair subjectKey,
      X500Name issuer,
      KeyPair issuerKey,
      List<String> dnsNames,
      boolean isCa) {
    try {
      Instant now = Instant.now();
      JcaX509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              issuer,
              BigInteger.valueOf(now.toEpochMilli()),
              Date.from(now.minus(Duration.ofMinutes(1))),
              Date.from(now.plus(Duration.ofDays(1))),
              subject,
              subjectKey.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(isCa));
      if (!dnsNames.isEmpty()) {
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(
                dnsNames.stream()
                    .map(d -> new GeneralName(GeneralName.dNSName, d))
                    .toArray(GeneralName[]::new)));
        b.addExtension(
            Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      }
      return b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey.getPrivate()));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static KeyPair ecKey() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(Object o) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(out)) {
      w.writeObject(o);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }
}

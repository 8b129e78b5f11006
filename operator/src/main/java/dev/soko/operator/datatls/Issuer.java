package dev.soko.operator.datatls;

import java.io.IOException;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import javax.security.auth.x500.X500Principal;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Issues the operator's certificates, the data path's and the snapshot metadata sidecar's: ECDSA
 * P-256 keys, SHA-256 signatures, made with the JDK's own providers (BouncyCastle only builds the
 * certificate structure).
 */
final class Issuer {
  static final Duration CA_VALIDITY = Duration.ofDays(365);
  static final Duration LEAF_VALIDITY = Duration.ofDays(30);

  /** Valid from a little before issue: nodes' clocks differ by seconds, rarely by minutes. */
  static final Duration BACKDATE = Duration.ofMinutes(5);

  static final String ORGANIZATION = "soko.dev";

  private final SecureRandom random;

  Issuer(SecureRandom random) {
    this.random = random;
  }

  /**
   * A self-signed CA. Each gets its own subject (the issue time in the CN), so that while an old
   * and a new CA are both trusted a peer's chain names exactly one of them.
   */
  Credential ca(Instant now) {
    KeyPair keys = keyPair();
    X500Name subject = name("soko-data-ca-" + now.getEpochSecond());
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          builder(subject, subject, now, CA_VALIDITY, keys)
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
              .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  extensions.createSubjectKeyIdentifier(keys.getPublic()));
      return sign(builder, keys, keys);
    } catch (CertIOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot issue the data path's CA", e);
    }
  }

  /** A component's certificate, subject CN {@code commonName}, for both ends of a connection. */
  Credential leaf(Credential ca, String commonName, Instant now) {
    return leaf(
        ca,
        commonName,
        List.of(),
        new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth},
        now);
  }

  /**
   * A server's certificate for the names its clients dial (subject alternative names, which TLS
   * clients check; the CN is only a label). Server authentication only: it cannot be presented as a
   * client, and its CN is no data path role, so it opens no data port.
   */
  Credential serving(Credential ca, String commonName, List<String> dnsNames, Instant now) {
    return leaf(ca, commonName, dnsNames, new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth}, now);
  }

  private Credential leaf(
      Credential ca,
      String commonName,
      List<String> dnsNames,
      KeyPurposeId[] purposes,
      Instant now) {
    KeyPair keys = keyPair();
    X500Name issuer = X500Name.getInstance(ca.certificate().getSubjectX500Principal().getEncoded());
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          builder(issuer, name(commonName), now, LEAF_VALIDITY, keys)
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
              .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
              .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  extensions.createSubjectKeyIdentifier(keys.getPublic()))
              .addExtension(
                  Extension.authorityKeyIdentifier,
                  false,
                  extensions.createAuthorityKeyIdentifier(ca.certificate()));
      if (!dnsNames.isEmpty()) {
        builder.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(
                dnsNames.stream()
                    .map(d -> new GeneralName(GeneralName.dNSName, d))
                    .toArray(GeneralName[]::new)));
      }
      return sign(builder, keys, new KeyPair(ca.certificate().getPublicKey(), ca.key()));
    } catch (CertIOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot issue the " + commonName + " certificate", e);
    }
  }

  private X509v3CertificateBuilder builder(
      X500Name issuer, X500Name subject, Instant now, Duration validity, KeyPair keys) {
    // Positive, non-zero, at most 20 octets (RFC 5280 4.1.2.2).
    BigInteger serial = new BigInteger(127, random).setBit(126);
    return new JcaX509v3CertificateBuilder(
        issuer,
        serial,
        Date.from(now.minus(BACKDATE)),
        Date.from(now.plus(validity)),
        subject,
        keys.getPublic());
  }

  private static Credential sign(X509v3CertificateBuilder builder, KeyPair subject, KeyPair issuer)
      throws GeneralSecurityException {
    try {
      X509Certificate certificate =
          new JcaX509CertificateConverter()
              .getCertificate(
                  builder.build(
                      new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate())));
      return Credential.of(certificate, subject.getPrivate());
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }

  private KeyPair keyPair() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), random);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("no ECDSA P-256 in this JVM", e);
    }
  }

  /** The subject of a component's certificate, as the JDK compares names. */
  static X500Principal subject(String commonName) {
    try {
      return new X500Principal(name(commonName).getEncoded());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static X500Name name(String commonName) {
    return new X500NameBuilder(BCStyle.INSTANCE)
        .addRDN(BCStyle.O, ORGANIZATION)
        .addRDN(BCStyle.CN, commonName)
        .build();
  }
}

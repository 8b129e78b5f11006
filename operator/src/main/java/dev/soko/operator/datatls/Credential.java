package dev.soko.operator.datatls;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A certificate with its private key, and the PEM text they were read from or written as: reused as
 * it is, so a reconcile that keeps it writes the same bytes.
 */
record Credential(
    X509Certificate certificate, PrivateKey key, String certificatePem, String keyPem) {
  static Credential of(X509Certificate certificate, PrivateKey key) {
    return new Credential(certificate, key, Pem.certificate(certificate), Pem.privateKey(key));
  }

  /**
   * The pair stored as PEM, when both parse and the key is the certificate's; empty otherwise
   * (missing, damaged or mismatched material is issued anew).
   */
  static Optional<Credential> read(String certificatePem, String keyPem) {
    if (certificatePem == null || keyPem == null) {
      return Optional.empty();
    }
    try {
      List<X509Certificate> certificates = Pem.certificates(certificatePem);
      if (certificates.size() != 1) {
        return Optional.empty();
      }
      Credential c =
          new Credential(certificates.get(0), Pem.ecPrivateKey(keyPem), certificatePem, keyPem);
      return c.keyMatches() ? Optional.of(c) : Optional.empty();
    } catch (GeneralSecurityException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Two thirds into the certificate's validity: when a reconcile issues its successor. */
  Instant renewAt() {
    return renewAt(certificate);
  }

  static Instant renewAt(X509Certificate certificate) {
    Instant from = certificate.getNotBefore().toInstant();
    Duration validity = Duration.between(from, certificate.getNotAfter().toInstant());
    return from.plus(validity.multipliedBy(2).dividedBy(3));
  }

  Instant notAfter() {
    return certificate.getNotAfter().toInstant();
  }

  /** Whether the certificate was signed with {@code issuer}'s key. */
  boolean issuedBy(X509Certificate issuer) {
    try {
      certificate.verify(issuer.getPublicKey());
      return certificate.getIssuerX500Principal().equals(issuer.getSubjectX500Principal());
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private boolean keyMatches() throws GeneralSecurityException {
    byte[] probe = "soko".getBytes(StandardCharsets.US_ASCII);
    Signature sign = Signature.getInstance("SHA256withECDSA");
    sign.initSign(key);
    sign.update(probe);
    byte[] signature = sign.sign();
    Signature verify = Signature.getInstance("SHA256withECDSA");
    verify.initVerify(certificate.getPublicKey());
    verify.update(probe);
    return verify.verify(signature);
  }
}

package dev.soko.operator.datatls;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;

/**
 * PEM as the drivers read it: certificates, and EC private keys in PKCS #8 ("PRIVATE KEY"), the
 * form grpc-java's key manager and Netty both load. The JDK's own encoders: output is the same for
 * the same object, so what is re-read and re-written compares equal.
 */
final class Pem {
  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";
  private static final Base64.Encoder LINES =
      Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));

  private Pem() {}

  static String certificate(X509Certificate certificate) {
    try {
      return block("CERTIFICATE", certificate.getEncoded());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static String privateKey(PrivateKey key) {
    return block("PRIVATE KEY", key.getEncoded());
  }

  /** Every certificate of a PEM bundle, in order. */
  static List<X509Certificate> certificates(String pem) throws GeneralSecurityException {
    return CertificateFactory.getInstance("X.509")
        .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))
        .stream()
        .map(X509Certificate.class::cast)
        .toList();
  }

  static PrivateKey ecPrivateKey(String pem) throws GeneralSecurityException {
    int begin = pem.indexOf(KEY_BEGIN);
    int end = pem.indexOf(KEY_END);
    if (begin < 0 || end < begin) {
      throw new GeneralSecurityException("not a PKCS #8 private key");
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(pem.substring(begin + KEY_BEGIN.length(), end));
    } catch (IllegalArgumentException e) {
      throw new GeneralSecurityException("not a PKCS #8 private key", e);
    }
    return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
  }

  private static String block(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + LINES.encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }
}

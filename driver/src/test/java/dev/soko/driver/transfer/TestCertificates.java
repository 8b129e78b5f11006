package dev.soko.driver.transfer;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates as the operator makes them for the data path: an ECDSA P-256 CA and, per role, a
 * certificate whose subject CN is the role, with both serverAuth and clientAuth, written as the
 * mounted Secret holds them ({@code tls.crt}, PKCS#8 {@code tls.key}, {@code ca.crt}).
 */
public final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  /** A CA: its key and self-signed certificate. */
  public record Ca(KeyPair keys, X509Certificate certificate) {}

  private TestCertificates() {}

  public static Ca ca(String name) throws Exception {
    KeyPair keys = keyPair();
    X500Name subject = new X500Name("CN=" + name);
    X509v3CertificateBuilder builder = builder(subject, subject, keys);
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
    builder.addExtension(
        Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    return new Ca(keys, sign(builder, keys));
  }

  /**
   * Writes {@code cn}'s certificate and key, signed by {@code ca}, and {@code trusted} as ca.crt.
   */
  static Path directory(Path dir, Ca ca, String cn, Ca trusted) throws Exception {
    KeyPair keys = keyPair();
    X509v3CertificateBuilder builder =
        builder(
            new X500Name(ca.certificate().getSubjectX500Principal().getName()),
            new X500Name("O=soko,CN=" + cn),
            keys);
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
    builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
    builder.addExtension(
        Extension.extendedKeyUsage,
        false,
        new ExtendedKeyUsage(
            new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
    X509Certificate certificate = sign(builder, ca.keys());
    Files.createDirectories(dir);
    write(dir.resolve("tls.crt"), "CERTIFICATE", certificate.getEncoded());
    write(dir.resolve("tls.key"), "PRIVATE KEY", keys.getPrivate().getEncoded());
    write(dir.resolve("ca.crt"), "CERTIFICATE", trusted.certificate().getEncoded());
    return dir;
  }

  /** As above, trusting the CA that signed it. */
  public static Path directory(Path dir, Ca ca, String cn) throws Exception {
    return directory(dir, ca, cn, ca);
  }

  private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
    Instant now = Instant.now();
    return new JcaX509v3CertificateBuilder(
        issuer,
        BigInteger.valueOf(SERIAL.incrementAndGet()),
        Date.from(now.minus(Duration.ofMinutes(5))),
        Date.from(now.plus(Duration.ofDays(1))),
        subject,
        keys.getPublic());
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair issuer)
      throws OperatorCreationException, GeneralSecurityException {
    return new JcaX509CertificateConverter()
        .getCertificate(
            builder.build(
                new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate())));
  }

  private static KeyPair keyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    return generator.generateKeyPair();
  }

  private static void write(Path file, String type, byte[] der) throws IOException {
    String pem =
        "-----BEGIN "
            + type
            + "-----\n"
            + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
            + "\n-----END "
            + type
            + "-----\n";
    Files.writeString(file, pem, StandardCharsets.US_ASCII);
  }
}

package dev.soko.operator.datatls;

import dev.soko.operator.model.DataTls;
import dev.soko.operator.model.ServingCertificates;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The serving certificate of one Secret, by the data path's CA, as one reconcile leaves it: kept
 * byte for byte while it is of the current CA (or of the retired one while the new CA propagates),
 * for the names asked, and before two thirds of its validity; issued anew otherwise, a damaged or
 * missing Secret included. Its CA bundle is what the components trust, so a CA rotation reaches
 * every client of the certificate with both CAs before the certificate moves to the new one. It
 * issues only what the render asks for, and remembers when what it answered is due.
 */
public final class KeptServingCertificates implements ServingCertificates {
  /** A SubjectAlternativeName entry's type for a DNS name (RFC 5280 4.2.1.6). */
  private static final int DNS_NAME = 2;

  private final Authority authority;
  private final Issuer issuer;
  private final Map<String, String> stored;
  private final Instant now;
  private Credential answered;

  KeptServingCertificates(
      Authority authority, Issuer issuer, Map<String, String> stored, Instant now) {
    this.authority = authority;
    this.issuer = issuer;
    this.stored = stored;
    this.now = now;
  }

  @Override
  public synchronized Optional<ServingCertificate> issue(String commonName, List<String> dnsNames) {
    if (answered == null || !fits(answered, commonName, dnsNames)) {
      answered =
          Credential.read(stored.get(DataTls.TLS_CERT), stored.get(DataTls.TLS_KEY))
              .filter(c -> fits(c, commonName, dnsNames))
              .filter(c -> authority.accepts(c, now))
              .filter(c -> now.isBefore(c.renewAt()))
              .orElseGet(() -> issuer.serving(authority.current(), commonName, dnsNames, now));
    }
    return Optional.of(
        new ServingCertificate(
            answered.certificatePem(), answered.keyPem(), authority.trustBundle()));
  }

  /** When the certificate answered is due for renewal; empty when none was asked for. */
  synchronized Optional<Instant> nextChange() {
    return Optional.ofNullable(answered).map(Credential::renewAt);
  }

  private static boolean fits(Credential c, String commonName, List<String> dnsNames) {
    return c.certificate().getSubjectX500Principal().equals(Issuer.subject(commonName))
        && dnsNames(c.certificate()).equals(Set.copyOf(dnsNames));
  }

  private static Set<String> dnsNames(X509Certificate certificate) {
    Set<String> out = new HashSet<>();
    try {
      Collection<List<?>> names = certificate.getSubjectAlternativeNames();
      if (names != null) {
        for (List<?> name : names) {
          if (Integer.valueOf(DNS_NAME).equals(name.get(0))) {
            out.add((String) name.get(1));
          }
        }
      }
    } catch (CertificateParsingException damaged) {
      // No names: issued anew.
    }
    return out;
  }
}

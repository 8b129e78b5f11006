package dev.soko.operator.datatls;

import dev.soko.operator.model.DataTls;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The data path's CA of one StorageCluster as this reconcile leaves it: the CA that signs and,
 * after a rotation, the previous CA's certificate, which stays trusted until it expires.
 *
 * @param retired the previous CA's certificate; null when none is still valid
 */
record Authority(Credential current, X509Certificate retired, String retiredPem) {
  /**
   * How long after a rotation the components' certificates of the previous CA are kept: time for
   * every pod's mounted ca.crt to hold the new CA (the kubelet refreshes Secret volumes within a
   * minute or two, the drivers re-read the files), so that no peer meets a certificate of a CA it
   * does not trust yet.
   */
  static final Duration PROPAGATION = Duration.ofHours(1);

  /**
   * Keeps the stored CA until two thirds of its validity; then issues a new one and retires the old
   * one. A CA Secret that is missing or damaged starts afresh, with nothing retired.
   */
  static Authority of(Map<String, String> stored, Instant now, Issuer issuer) {
    Optional<Credential> kept =
        Credential.read(stored.get(DataTls.CA_CERT), stored.get(DataTls.CA_KEY))
            .filter(c -> c.certificate().getBasicConstraints() >= 0);
    if (kept.isPresent() && now.isBefore(kept.get().renewAt())) {
      String pem = stored.get(DataTls.RETIRED_CA_CERT);
      return retired(pem, now)
          .map(r -> new Authority(kept.get(), r, pem))
          .orElse(new Authority(kept.get(), null, null));
    }
    Credential fresh = issuer.ca(now);
    if (kept.isPresent() && now.isBefore(kept.get().notAfter())) {
      return new Authority(fresh, kept.get().certificate(), kept.get().certificatePem());
    }
    return new Authority(fresh, null, null);
  }

  private static Optional<X509Certificate> retired(String pem, Instant now) {
    if (pem == null) {
      return Optional.empty();
    }
    try {
      List<X509Certificate> certificates = Pem.certificates(pem);
      return certificates.size() == 1 && now.isBefore(certificates.get(0).getNotAfter().toInstant())
          ? Optional.of(certificates.get(0))
          : Optional.empty();
    } catch (GeneralSecurityException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether a component may keep a certificate {@code leaf} that is otherwise valid: one of the
   * current CA, or of the retired CA while the new CA is still reaching every pod.
   */
  boolean accepts(Credential leaf, Instant now) {
    return leaf.issuedBy(current.certificate())
        || (retired != null && leaf.issuedBy(retired) && now.isBefore(propagated()));
  }

  /** When every pod trusts the current CA; its certificates replace the retired CA's then. */
  Instant propagated() {
    return current.certificate().getNotBefore().toInstant().plus(Issuer.BACKDATE).plus(PROPAGATION);
  }

  /** What every component trusts (its ca.crt): the current CA, then the retired one. */
  String trustBundle() {
    return retired == null ? current.certificatePem() : current.certificatePem() + retiredPem;
  }

  /** The CA Secret's data. */
  Map<String, String> secretData() {
    Map<String, String> data = new TreeMap<>();
    data.put(DataTls.CA_CERT, current.certificatePem());
    data.put(DataTls.CA_KEY, current.keyPem());
    if (retired != null) {
      data.put(DataTls.RETIRED_CA_CERT, retiredPem);
    }
    return data;
  }

  /**
   * The next time this CA changes something: its renewal, the end of the propagation (the
   * components' certificates move to it), or the retired CA's expiry (it leaves the bundle).
   */
  Instant nextChange(Instant now) {
    Instant next = current.renewAt();
    if (retired != null) {
      next = earliest(next, retired.getNotAfter().toInstant());
      if (now.isBefore(propagated())) {
        next = earliest(next, propagated());
      }
    }
    return next;
  }

  static Instant earliest(Instant a, Instant b) {
    return a.isBefore(b) ? a : b;
  }
}

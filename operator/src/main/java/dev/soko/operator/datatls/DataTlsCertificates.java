package dev.soko.operator.datatls;

import dev.soko.operator.model.DataTls;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.SnapshotMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.security.auth.x500.X500Principal;

/**
 * The data path's certificates of one StorageCluster (docs/design.md, "Node to node"): from the
 * Secrets the reconcile observed, the Secrets it applies. Valid material is kept byte for byte, so
 * a reconcile that finds it writes nothing. A certificate two thirds into its validity is replaced
 * by a new key and certificate. A new CA goes into every component's ca.crt first; an hour later
 * ({@link Authority#PROPAGATION}) it re-issues the components' certificates, and the old CA stays
 * in ca.crt until it expires, so peers holding either CA's certificate trust each other throughout.
 * The drivers re-read the mounted files, so a rotation restarts no pod. The same CA signs the
 * snapshot metadata sidecar's serving certificate under the same rules ({@link
 * KeptServingCertificates}).
 */
public final class DataTlsCertificates {
  /**
   * @param secrets the CA's Secret, then one per component
   * @param dataPathChange when the CA or a component's certificate is next due for renewal, or a
   *     retired CA expires
   * @param serving the snapshot metadata sidecar's certificate of the same CA, for the render (its
   *     Secret is part of the desired state, as only the render knows whether the sidecar runs)
   */
  public record Desired(
      List<Secret> secrets, Instant dataPathChange, KeptServingCertificates serving) {
    /** The next change of them all, the serving certificate's once the render asked for it. */
    public Instant nextChange() {
      return serving
          .nextChange()
          .map(s -> Authority.earliest(dataPathChange, s))
          .orElse(dataPathChange);
    }
  }

  private final Issuer issuer;
  private final Duration resync;

  /**
   * @param resync the operator's longest time between two reconciles: a renewal due later is left
   *     to a periodic reconcile
   */
  public DataTlsCertificates(Duration resync) {
    this.issuer = new Issuer(new SecureRandom());
    this.resync = resync;
  }

  /**
   * @param observed the StorageCluster's Secrets by name, as the cache holds them: the data path's
   *     and the snapshot metadata sidecar's ({@link SnapshotMetadata#secretName})
   */
  public Desired desired(Names n, Map<String, Secret> observed, Instant now) {
    Authority authority = Authority.of(stored(observed.get(n.dataCa())), now, issuer);
    List<Secret> secrets = new ArrayList<>();
    secrets.add(DataTls.caSecret(n, authority.secretData()));
    Instant next = authority.nextChange(now);
    for (String component : DataTls.COMPONENTS) {
      Map<String, String> stored = stored(observed.get(n.dataTls(component)));
      X500Principal subject = Issuer.subject(DataTls.commonName(component));
      Credential leaf =
          Credential.read(stored.get(DataTls.TLS_CERT), stored.get(DataTls.TLS_KEY))
              .filter(c -> c.certificate().getSubjectX500Principal().equals(subject))
              .filter(c -> authority.accepts(c, now))
              .filter(c -> now.isBefore(c.renewAt()))
              .orElseGet(
                  () -> issuer.leaf(authority.current(), DataTls.commonName(component), now));
      secrets.add(
          DataTls.componentSecret(
              n,
              component,
              Map.of(
                  DataTls.TLS_CERT, leaf.certificatePem(),
                  DataTls.TLS_KEY, leaf.keyPem(),
                  DataTls.CA_CERT, authority.trustBundle())));
      next = Authority.earliest(next, leaf.renewAt());
    }
    KeptServingCertificates serving =
        new KeptServingCertificates(
            authority, issuer, stored(observed.get(SnapshotMetadata.secretName(n))), now);
    return new Desired(secrets, next, serving);
  }

  /**
   * How long until the reconcile must run again for {@code desired}'s next change; null when the
   * periodic resync comes first (a requeue replaces it, so a later one would delay everything else
   * the resync picks up).
   */
  public Duration recheck(Desired desired, Instant now) {
    Duration until = Duration.between(now, desired.nextChange());
    if (until.compareTo(resync) >= 0) {
      return null;
    }
    return until.isNegative() || until.isZero() ? Duration.ofSeconds(1) : until;
  }

  /** A Secret's values as text; empty for a missing Secret. */
  private static Map<String, String> stored(Secret secret) {
    Map<String, String> out = new TreeMap<>();
    if (secret == null || secret.getData() == null) {
      return out;
    }
    secret
        .getData()
        .forEach(
            (k, v) -> {
              try {
                out.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8));
              } catch (IllegalArgumentException damaged) {
                // Left out: what it should hold is issued anew.
              }
            });
    return out;
  }
}

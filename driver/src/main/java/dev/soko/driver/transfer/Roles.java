package dev.soko.driver.transfer;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;

/**
 * The components that may use the data path, named by the subject CN of their certificates: one
 * certificate per role, not per node, so the CN says what the caller is and the chain (verified
 * against the operator's CA) that it is one of ours.
 */
final class Roles {
  /**
   * The node plugins: they read each other's snapshots and volumes (a restore or clone on another
   * node).
   */
  static final String NODE = "soko-node";

  /** The controller-mode driver: it relays a snapshot's block metadata for the sidecar. */
  static final String CONTROLLER = "soko-controller";

  static final Set<String> ALL = Set.of(NODE, CONTROLLER);

  private Roles() {}

  /** The CN of the TLS peer's own certificate (the first of its chain), or empty. */
  static Optional<String> ofPeer(SSLSession session) {
    if (session == null) {
      return Optional.empty();
    }
    Certificate[] chain;
    try {
      chain = session.getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return Optional.empty();
    }
    if (chain.length == 0 || !(chain[0] instanceof X509Certificate certificate)) {
      return Optional.empty();
    }
    return commonName(certificate.getSubjectX500Principal());
  }

  /** The subject's CN; empty when it has none or more than one (which would be ambiguous). */
  static Optional<String> commonName(X500Principal subject) {
    LdapName name;
    try {
      name = new LdapName(subject.getName(X500Principal.RFC2253));
    } catch (InvalidNameException e) {
      return Optional.empty();
    }
    String found = null;
    for (Rdn rdn : name.getRdns()) {
      if (rdn.getType().equalsIgnoreCase("CN")) {
        if (found != null || !(rdn.getValue() instanceof String value)) {
          return Optional.empty();
        }
        found = value;
      }
    }
    return Optional.ofNullable(found);
  }
}

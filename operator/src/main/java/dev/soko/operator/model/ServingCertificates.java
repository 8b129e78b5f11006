package dev.soko.operator.model;

import java.util.List;
import java.util.Optional;

/**
 * Where a serving certificate of the operator's CA comes from. The render asks for one by subject
 * and names; the implementation owns the CA, keeps what it issued and renews it, so that asking
 * again for the same names answers the same certificate until it is due.
 */
@FunctionalInterface
public interface ServingCertificates {
  /**
   * @param commonName the subject's CN
   * @param dnsNames the subject alternative names the clients connect by
   * @return empty where no CA is at hand ({@link #NONE})
   */
  Optional<ServingCertificate> issue(String commonName, List<String> dnsNames);

  /**
   * A certificate with its key and the bundle of CA certificates that verifies it, all PEM.
   *
   * @param caBundle one or more CA certificates: during a CA rotation both the old and the new one
   */
  record ServingCertificate(String certificate, String privateKey, String caBundle) {}

  /**
   * No CA: the offline render ({@code soko-operator render}), which prints no key. What carries a
   * certificate or its CA is left out of the render; the operator issues it at run time.
   */
  ServingCertificates NONE = (cn, names) -> Optional.empty();
}

package dev.soko.operator.model;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The node-to-node data path as the pods and the Secrets carry it (docs/design.md, "Node to node"):
 * the CA Secret, one kubernetes.io/tls Secret per component (node, controller) mounted read-only
 * into its driver container, and the node plugin's data port. What the Secrets hold is issued at
 * run time ({@code datatls.DataTlsCertificates}); this class only shapes the objects.
 */
public final class DataTls {
  /** Where a driver container finds tls.crt, tls.key and ca.crt. */
  public static final String MOUNT_DIR = "/etc/soko/data-tls";

  /**
   * The node plugin's data port. Not 9810, the port the docs' example and the end-to-end tiers give
   * driver.metricsPort (the driver serves metrics on every address of the pod, so the two would
   * collide), nor 9808, 9809, 9811 or 9812, the other ports of Soko's pods.
   */
  public static final int PORT = 9813;

  public static final String PORT_NAME = "data";
  static final String VOLUME = "data-tls";
  static final String POD_IP_ENV = "POD_IP";

  public static final String CA_CERT = "ca.crt";
  public static final String CA_KEY = "ca.key";

  /**
   * In the CA Secret after a CA rotation: the previous CA's certificate, kept (and trusted) until
   * it expires, so that a peer still holding a certificate it signed is trusted meanwhile.
   */
  public static final String RETIRED_CA_CERT = "retired-ca.crt";

  public static final String TLS_CERT = "tls.crt";
  public static final String TLS_KEY = "tls.key";
  public static final String TLS_TYPE = "kubernetes.io/tls";
  static final String CA_COMPONENT = "data-ca";

  /** The components that hold a certificate, each its own role. */
  public static final List<String> COMPONENTS = List.of(Names.NODE, Names.CONTROLLER);

  private DataTls() {}

  /** The names of the StorageCluster's data path Secrets: the CA's, then each component's. */
  public static List<String> secretNames(Names n) {
    List<String> names = new ArrayList<>();
    names.add(n.dataCa());
    COMPONENTS.forEach(c -> names.add(n.dataTls(c)));
    return names;
  }

  /** A component's role, the subject CN of its certificate: soko-node, soko-controller. */
  public static String commonName(String component) {
    return "soko-" + component;
  }

  /**
   * Whether this driver's containers get the data path's flags, mount and port: drivers from the
   * release whose command line has {@code --data-address} and {@code --data-tls-dir} on (an older
   * pinned driver would refuse them). The Secrets are issued either way.
   */
  static boolean rendered(ResolvedImages images) {
    return DriverRelease.of(images).has(DriverRelease.DATA_PATH);
  }

  /** The CA Secret (Opaque): ca.crt, ca.key and, after a rotation, retired-ca.crt. */
  public static Secret caSecret(Names n, Map<String, String> pem) {
    return secret(n, n.dataCa(), CA_COMPONENT, "Opaque", pem);
  }

  /** A component's Secret (kubernetes.io/tls): tls.crt, tls.key and the trusted CAs in ca.crt. */
  public static Secret componentSecret(Names n, String component, Map<String, String> pem) {
    return secret(n, n.dataTls(component), component, TLS_TYPE, pem);
  }

  /**
   * Values as {@code data} (base64), not {@code stringData}: the API server stores and returns
   * {@code data}, so the applied object compares equal to what the cache holds.
   */
  private static Secret secret(
      Names n, String name, String component, String type, Map<String, String> pem) {
    Map<String, String> data = new TreeMap<>();
    pem.forEach(
        (k, v) ->
            data.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    return new SecretBuilder()
        .withMetadata(Rbac.meta(n, name, n.namespace(), component))
        .withType(type)
        .withData(data)
        .build();
  }

  /** The node driver serves the data port on its pod's address. */
  static List<String> nodeArgs() {
    return List.of("--data-address=$(" + POD_IP_ENV + "):" + PORT, "--data-tls-dir=" + MOUNT_DIR);
  }

  /** The controller's driver only calls nodes: no data port of its own. */
  static List<String> controllerArgs() {
    return List.of("--data-tls-dir=" + MOUNT_DIR);
  }

  static EnvVar podIpEnv() {
    return Containers.fieldEnv(POD_IP_ENV, "status.podIP");
  }

  static ContainerPort port() {
    return new ContainerPortBuilder()
        .withName(PORT_NAME)
        .withContainerPort(PORT)
        .withProtocol("TCP")
        .build();
  }

  static VolumeMount mount() {
    return new VolumeMountBuilder()
        .withName(VOLUME)
        .withMountPath(MOUNT_DIR)
        .withReadOnly(true)
        .build();
  }

  /** The component's Secret as a volume; the key only its owner (the driver runs as root) reads. */
  static Volume volume(Names n, String component) {
    return new VolumeBuilder()
        .withName(VOLUME)
        .withNewSecret()
        .withSecretName(n.dataTls(component))
        .withDefaultMode(0400)
        .endSecret()
        .build();
  }
}

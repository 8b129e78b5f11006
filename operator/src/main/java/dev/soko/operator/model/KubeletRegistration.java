package dev.soko.operator.model;

import dev.soko.api.v1alpha1.Placement;
import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import java.util.List;

/**
 * What {@code spec.driver.registration} changes in the pods. {@code BuiltIn}: the driver registers
 * with the kubelet itself (a socket in the kubelet's plugins_registry directory) and serves {@code
 * GET /healthz} on the health port. {@code Sidecars}: the upstream node-driver-registrar and
 * livenessprobe containers do both, talking to the driver over its socket.
 */
final class KubeletRegistration {
  /** The volume of the kubelet's plugins_registry directory and where containers mount it. */
  static final String VOLUME = "registration-dir";

  static final String DIR = "/registration";

  /**
   * node-driver-registrar's {@code --http-endpoint}, whose {@code /healthz} fails when its
   * registration socket is gone (kubernetes-csi/node-driver-registrar, README "Example" and
   * cmd/csi-node-driver-registrar/node_register.go, the same in every tag of the versions table).
   */
  static final int REGISTRAR_HEALTH_PORT = 9809;

  private KubeletRegistration() {}

  /** The spec's mode; BuiltIn when unset, as the CRD defaults it. */
  static Registration of(StorageClusterSpec spec) {
    Registration r = spec.getDriver() == null ? null : spec.getDriver().getRegistration();
    return r == null ? Registration.BuiltIn : r;
  }

  /** Whether a pod of this mode runs the component's container (and so needs its image). */
  static boolean deploys(Registration mode, Component c) {
    boolean sidecar = c == Component.REGISTRAR || c == Component.LIVENESS_PROBE;
    return !sidecar || mode == Registration.Sidecars;
  }

  /** The node-mode driver's registration and health flags; none with sidecars. */
  static List<String> nodeDriverArgs(StorageClusterSpec spec, String socketOnHost) {
    if (of(spec) != Registration.BuiltIn) {
      return List.of();
    }
    return List.of(
        "--kubelet-registration-path=" + socketOnHost,
        "--registration-dir=" + DIR,
        healthAddress());
  }

  /** The node-mode driver's mount of plugins_registry; none with sidecars. */
  /** The node driver's readiness: registered with the kubelet (BuiltIn); none with Sidecars. */
  static Probe nodeDriverReadinessProbe(StorageClusterSpec spec) {
    return of(spec) == Registration.BuiltIn ? Containers.driverReadinessProbe() : null;
  }

  static List<VolumeMount> nodeDriverMounts(StorageClusterSpec spec) {
    return of(spec) == Registration.BuiltIn ? List.of(registrationMount()) : List.of();
  }

  /** The controller-mode driver's health flag; none with sidecars. */
  static List<String> controllerDriverArgs(StorageClusterSpec spec) {
    return of(spec) == Registration.BuiltIn ? List.of(healthAddress()) : List.of();
  }

  /** node-driver-registrar and livenessprobe with sidecars; none built in. */
  static List<Container> nodeSidecars(
      StorageClusterSpec spec, ResolvedImages images, Placement node, String socketOnHost) {
    if (of(spec) != Registration.Sidecars) {
      return List.of();
    }
    Container registrar =
        Containers.sidecar(Component.REGISTRAR, images, spec, node)
            .withArgs(
                "--csi-address=" + Containers.SOCKET,
                "--kubelet-registration-path=" + socketOnHost,
                "--http-endpoint=:" + REGISTRAR_HEALTH_PORT,
                "--v=2")
            .addToVolumeMounts(registrationMount())
            .addToPorts(
                new ContainerPortBuilder()
                    .withName("reg-healthz")
                    .withContainerPort(REGISTRAR_HEALTH_PORT)
                    .withProtocol("TCP")
                    .build())
            // The probe upstream's README gives the registrar.
            .withLivenessProbe(
                new ProbeBuilder()
                    .withNewHttpGet()
                    .withPath("/healthz")
                    .withNewPort("reg-healthz")
                    .endHttpGet()
                    .withInitialDelaySeconds(5)
                    .withTimeoutSeconds(5)
                    .build())
            .build();
    return List.of(registrar, livenessProbe(spec, images, node));
  }

  /** livenessprobe with sidecars; none built in. */
  static List<Container> controllerSidecars(
      StorageClusterSpec spec, ResolvedImages images, Placement ctrl) {
    return of(spec) == Registration.Sidecars
        ? List.of(livenessProbe(spec, images, ctrl))
        : List.of();
  }

  /**
   * Serves the driver's health port by calling its Probe over the socket. --http-endpoint, not the
   * deprecated --health-port (cmd/livenessprobe/main.go at v2.12.0, v2.15.0 and v2.19.0).
   */
  private static Container livenessProbe(
      StorageClusterSpec spec, ResolvedImages images, Placement p) {
    return Containers.sidecar(Component.LIVENESS_PROBE, images, spec, p)
        .withArgs(
            "--csi-address=" + Containers.SOCKET, "--http-endpoint=:" + Containers.HEALTH_PORT)
        .build();
  }

  /** All interfaces of the pod: the kubelet probes the pod IP. */
  private static String healthAddress() {
    return "--health-address=0.0.0.0:" + Containers.HEALTH_PORT;
  }

  private static VolumeMount registrationMount() {
    return new VolumeMountBuilder().withName(VOLUME).withMountPath(DIR).build();
  }
}

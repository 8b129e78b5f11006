package dev.soko.operator.model;

import dev.soko.api.v1alpha1.ImagesSpec;
import dev.soko.api.v1alpha1.Placement;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import java.util.List;

/** Pieces shared by the node DaemonSet and the controller Deployment. */
final class Containers {
  static final String SOCKET_DIR = "/csi";
  static final String SOCKET = SOCKET_DIR + "/csi.sock";
  static final String ENDPOINT = "unix://" + SOCKET;
  static final String SOCKET_VOLUME = "socket-dir";
  static final int HEALTH_PORT = 9808;

  /**
   * The controller pod's sidecars' --http-endpoint (metrics and {@code /healthz/leader-election}).
   * Not 9809 (node-driver-registrar's, in the node pod) nor the port the docs' example gives
   * driver.metricsPort (9810).
   */
  static final int RESIZER_HTTP_PORT = 9811;

  static final int HEALTH_MONITOR_HTTP_PORT = 9812;

  /** The port name of a sidecar's --http-endpoint, as in the sidecars' deploy/kubernetes. */
  static final String HTTP_ENDPOINT = "http-endpoint";

  private Containers() {}

  static ContainerBuilder sidecar(
      Component c, ResolvedImages images, StorageClusterSpec spec, Placement placement) {
    return new ContainerBuilder()
        .withName(c.key())
        .withImage(images.get(c))
        .withImagePullPolicy(pullPolicy(spec))
        .withResources(resources(placement, c, spec))
        .withVolumeMounts(socketMount());
  }

  /** The driver's --metrics-address and container port, when driver.metricsPort is set. */
  static void metrics(StorageClusterSpec spec, List<String> args, ContainerBuilder driver) {
    Integer port = spec.getDriver().getMetricsPort();
    if (port == null) {
      return;
    }
    // All interfaces of the pod: Prometheus scrapes the pod IP.
    args.add("--metrics-address=0.0.0.0:" + port);
    driver.addNewPort().withName("metrics").withContainerPort(port).withProtocol("TCP").endPort();
  }

  static VolumeMount socketMount() {
    return new VolumeMountBuilder().withName(SOCKET_VOLUME).withMountPath(SOCKET_DIR).build();
  }

  /**
   * The driver container's health port. The driver serves it itself (--health-address) or, with
   * driver.registration Sidecars, the liveness-probe sidecar does (containers share the pod's
   * network) by calling the driver's Probe over the socket.
   */
  static ContainerPort healthPort() {
    return new ContainerPortBuilder()
        .withName("healthz")
        .withContainerPort(HEALTH_PORT)
        .withProtocol("TCP")
        .build();
  }

  static ContainerPort httpEndpointPort(int port) {
    return new ContainerPortBuilder()
        .withName(HTTP_ENDPOINT)
        .withContainerPort(port)
        .withProtocol("TCP")
        .build();
  }

  /**
   * Restarts a leader-elected sidecar whose leader cannot renew its lease: the probe of
   * external-resizer's deploy/kubernetes/deployment.yaml (the same at v1.10.1, v1.13.2, v2.3.0).
   */
  static Probe leaderElectionLivenessProbe() {
    return new ProbeBuilder()
        .withNewHttpGet()
        .withPath("/healthz/leader-election")
        .withNewPort(HTTP_ENDPOINT)
        .endHttpGet()
        .withFailureThreshold(1)
        .withInitialDelaySeconds(10)
        .withTimeoutSeconds(10)
        .withPeriodSeconds(20)
        .build();
  }

  /** Restarts the driver container when its health port reports the driver's Probe failing. */
  static Probe driverLivenessProbe() {
    return new ProbeBuilder()
        .withNewHttpGet()
        .withPath("/healthz")
        .withNewPort("healthz")
        .endHttpGet()
        .withInitialDelaySeconds(10)
        .withPeriodSeconds(10)
        .withTimeoutSeconds(3)
        .withFailureThreshold(5)
        .build();
  }

  /**
   * Holds the node plugin pod not-ready until the kubelet has registered the driver ({@code
   * /readyz}), so a rolling update moves to the next node only once this one's kubelet is served by
   * the new pod. Only the driver's own health server has that path (driver.registration BuiltIn).
   */
  static Probe driverReadinessProbe() {
    return new ProbeBuilder()
        .withNewHttpGet()
        .withPath("/readyz")
        .withNewPort("healthz")
        .endHttpGet()
        .withPeriodSeconds(5)
        .withTimeoutSeconds(3)
        .withFailureThreshold(3)
        .build();
  }

  static String pullPolicy(StorageClusterSpec spec) {
    ImagesSpec images = spec.getImages();
    return images == null || images.getPullPolicy() == null
        ? "IfNotPresent"
        : images.getPullPolicy().name();
  }

  static List<LocalObjectReference> pullSecrets(StorageClusterSpec spec) {
    ImagesSpec images = spec.getImages();
    if (images == null || images.getPullSecrets() == null) {
      return List.of();
    }
    return images.getPullSecrets().stream().map(LocalObjectReference::new).toList();
  }

  /**
   * Per-container resources from the placement, falling back to driver.resources for the driver.
   */
  static ResourceRequirements resources(Placement placement, Component c, StorageClusterSpec spec) {
    ResourceRequirements own = resources(placement, c.key());
    if (own == null && c == Component.DRIVER && spec.getDriver() != null) {
      return spec.getDriver().getResources();
    }
    return own;
  }

  /** The resources that placement's resources give the container of that name; null if none. */
  static ResourceRequirements resources(Placement placement, String container) {
    if (placement == null || placement.getResources() == null) {
      return null;
    }
    return placement.getResources().get(container);
  }

  /**
   * The operand namespace, for the driver in both modes: where the controller's and the nodes'
   * drivers meet in NodeRequests (ModifyVolume).
   */
  static final String NAMESPACE_ENV = "SOKO_NAMESPACE";

  static EnvVar namespaceEnv() {
    return fieldEnv(NAMESPACE_ENV, "metadata.namespace");
  }

  static EnvVar fieldEnv(String name, String fieldPath) {
    return new EnvVarBuilder()
        .withName(name)
        .withNewValueFrom()
        .withNewFieldRef()
        .withFieldPath(fieldPath)
        .endFieldRef()
        .endValueFrom()
        .build();
  }
}

package dev.soko.api.v1alpha1;

/** How the driver registers with the kubelet and serves its liveness endpoint. */
public enum Registration {
  /**
   * The driver container does both: kubelet plugin registration through the plugins_registry
   * directory and {@code GET /healthz} on the health port.
   */
  BuiltIn,
  /** The upstream node-driver-registrar and livenessprobe sidecar containers. */
  Sidecars
}

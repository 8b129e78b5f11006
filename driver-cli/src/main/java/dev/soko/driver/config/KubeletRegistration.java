package dev.soko.driver.config;

import java.nio.file.Path;

/**
 * Built-in kubelet plugin registration, in place of the node-driver-registrar sidecar.
 *
 * @param kubeletEndpoint the CSI socket as the kubelet sees it on the host, which it dials after
 *     registration; it is only reported, never opened by the driver (its own mount may differ)
 * @param socket the registration socket the driver makes in the kubelet's plugin registry
 *     directory, {@code <registration-dir>/<driver-name>-reg.sock}
 */
public record KubeletRegistration(Path kubeletEndpoint, Path socket) {}

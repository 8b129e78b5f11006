package dev.soko.driver.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The driver's whole configuration, parsed from the command line.
 *
 * @param endpoint the gRPC endpoint, {@code unix:///path/csi.sock}
 * @param allowedPathRoots staging and target paths must lie under one of these (kubelet's dir)
 * @param metricsAddress host:port of the Prometheus endpoint, empty to disable
 * @param healthAddress host:port of the liveness endpoint {@code /healthz}, empty to disable
 * @param registration built-in kubelet registration (node mode), empty when off
 * @param kubeletDir the kubelet's root directory as this process sees it (node mode); when given,
 *     pools on its filesystem are refused unless they allow the root filesystem
 * @param logLevel one of {@link #LOG_LEVELS}
 * @param labelImportedSnapshots node mode: label the pre-provisioned VolumeSnapshotContents whose
 *     snapshot this node holds, so that this node's csi-snapshotter serves them
 */
public record DriverConfig(
    String driverName,
    String nodeId,
    Mode mode,
    String endpoint,
    List<PoolConfig> pools,
    List<Path> allowedPathRoots,
    int maxVolumesPerNode,
    String metricsAddress,
    String healthAddress,
    Optional<KubeletRegistration> registration,
    Optional<Path> kubeletDir,
    String logLevel,
    boolean labelImportedSnapshots) {

  /** The names {@code --log-level} takes, least verbose first. */
  public static final List<String> LOG_LEVELS = List.of("error", "warn", "info", "debug", "trace");

  /** A configuration that logs at info. */
  public DriverConfig(
      String driverName,
      String nodeId,
      Mode mode,
      String endpoint,
      List<PoolConfig> pools,
      List<Path> allowedPathRoots,
      int maxVolumesPerNode,
      String metricsAddress,
      String healthAddress,
      Optional<KubeletRegistration> registration,
      Optional<Path> kubeletDir) {
    this(
        driverName,
        nodeId,
        mode,
        endpoint,
        pools,
        allowedPathRoots,
        maxVolumesPerNode,
        metricsAddress,
        healthAddress,
        registration,
        kubeletDir,
        "info");
  }

  /** A configuration that labels no imported snapshot. */
  public DriverConfig(
      String driverName,
      String nodeId,
      Mode mode,
      String endpoint,
      List<PoolConfig> pools,
      List<Path> allowedPathRoots,
      int maxVolumesPerNode,
      String metricsAddress,
      String healthAddress,
      Optional<KubeletRegistration> registration,
      Optional<Path> kubeletDir,
      String logLevel) {
    this(
        driverName,
        nodeId,
        mode,
        endpoint,
        pools,
        allowedPathRoots,
        maxVolumesPerNode,
        metricsAddress,
        healthAddress,
        registration,
        kubeletDir,
        logLevel,
        false);
  }

  /** A configuration without a kubelet directory: the root-filesystem check is off. */
  public DriverConfig(
      String driverName,
      String nodeId,
      Mode mode,
      String endpoint,
      List<PoolConfig> pools,
      List<Path> allowedPathRoots,
      int maxVolumesPerNode,
      String metricsAddress,
      String healthAddress,
      Optional<KubeletRegistration> registration) {
    this(
        driverName,
        nodeId,
        mode,
        endpoint,
        pools,
        allowedPathRoots,
        maxVolumesPerNode,
        metricsAddress,
        healthAddress,
        registration,
        Optional.empty());
  }

  /** Which CSI services this process serves. */
  public enum Mode {
    /** Identity, Controller and Node over this node's pools (distributed provisioning). */
    NODE,
    /** Identity and the cluster-wide Controller calls (expansion), without pool access. */
    CONTROLLER
  }
}

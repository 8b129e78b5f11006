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
 * @param dataAddress node mode: host:port of the node-to-node data port, empty when there is none
 * @param dataTlsDir the directory of the data path's certificate, key and CA bundle; present
 *     whenever {@code dataAddress} is given
 * @param dataMaxReads node mode: the most streams of snapshot or volume data and block metadata the
 *     data port serves at once; a caller beyond it is refused with RESOURCE_EXHAUSTED
 * @param immediateGrowth controller mode: hand each growth to the volume's node at once; false
 *     leaves it to the kubelet's NodeExpandVolume
 * @param nriSocket node mode: the container runtime's NRI socket, through which a volume's IO
 *     limits are written into a container's cgroup before it runs; empty when off
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
    boolean labelImportedSnapshots,
    String dataAddress,
    Optional<Path> dataTlsDir,
    int dataMaxReads,
    boolean immediateGrowth,
    Optional<Path> nriSocket) {

  /** The most data streams a node's port serves at once, unless told otherwise. */
  public static final int DEFAULT_DATA_MAX_READS = 4;

  /**
   * A configuration whose growths go to the volume's node at once (the default), without NRI: IO
   * limits reach containers only by the periodic pass.
   */
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
      String logLevel,
      boolean labelImportedSnapshots,
      String dataAddress,
      Optional<Path> dataTlsDir,
      int dataMaxReads) {
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
        labelImportedSnapshots,
        dataAddress,
        dataTlsDir,
        dataMaxReads,
        true,
        Optional.empty());
  }

  /** A configuration without the node-to-node data path (no data port, no credentials for it). */
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
      String logLevel,
      boolean labelImportedSnapshots) {
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
        labelImportedSnapshots,
        "",
        Optional.empty(),
        DEFAULT_DATA_MAX_READS);
  }

  /** The names {@code --log-level} takes, least verbose first. */
  public static final List<String> LOG_LEVELS = List.of("error", "warn", "info", "debug", "trace");

  /**
   * A node's configuration with every optional part off, as tests and embedders start from: no HTTP
   * endpoint, no kubelet registration, no kubelet directory (the root-filesystem check is off),
   * info logs, no snapshot labelling.
   */
  public static DriverConfig node(
      String driverName,
      String nodeId,
      String endpoint,
      List<PoolConfig> pools,
      List<Path> allowedPathRoots,
      int maxVolumesPerNode) {
    return new DriverConfig(
        driverName,
        nodeId,
        Mode.NODE,
        endpoint,
        pools,
        allowedPathRoots,
        maxVolumesPerNode,
        "",
        "",
        Optional.empty(),
        Optional.empty(),
        "info",
        false,
        "",
        Optional.empty(),
        DEFAULT_DATA_MAX_READS);
  }

  /** This configuration with the kubelet's root directory, so the root-filesystem check runs. */
  public DriverConfig withKubeletDir(Path dir) {
    return new DriverConfig(
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
        Optional.of(dir),
        logLevel,
        labelImportedSnapshots,
        dataAddress,
        dataTlsDir,
        dataMaxReads,
        immediateGrowth,
        nriSocket);
  }

  /** This configuration with the node-to-node data port at {@code address}, credentials in dir. */
  public DriverConfig withDataPort(String address, Path tlsDir) {
    return new DriverConfig(
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
        labelImportedSnapshots,
        address,
        Optional.of(tlsDir),
        dataMaxReads,
        immediateGrowth,
        nriSocket);
  }

  /** This configuration with the runtime's NRI socket {@code socket} (empty: without NRI). */
  public DriverConfig withNriSocket(Optional<Path> socket) {
    return new DriverConfig(
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
        labelImportedSnapshots,
        dataAddress,
        dataTlsDir,
        dataMaxReads,
        immediateGrowth,
        socket);
  }

  /** This configuration with growths handed to the nodes at once ({@code true}) or not. */
  public DriverConfig withImmediateGrowth(boolean immediate) {
    return new DriverConfig(
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
        labelImportedSnapshots,
        dataAddress,
        dataTlsDir,
        dataMaxReads,
        immediate,
        nriSocket);
  }

  /** Which CSI services this process serves. */
  public enum Mode {
    /** Identity, Controller and Node over this node's pools (distributed provisioning). */
    NODE,
    /** Identity and the cluster-wide Controller calls (expansion), without pool access. */
    CONTROLLER
  }
}

package dev.soko.driver;

import dev.soko.driver.cli.DriverCommand;
import dev.soko.driver.cli.Version;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.Endpoint;
import dev.soko.driver.config.KubeletRegistration;
import dev.soko.driver.csi.ClusterControllerService;
import dev.soko.driver.csi.ControllerService;
import dev.soko.driver.csi.GroupControllerService;
import dev.soko.driver.csi.GroupIds;
import dev.soko.driver.csi.IdentityService;
import dev.soko.driver.csi.NodeService;
import dev.soko.driver.csi.PoolFsTypes;
import dev.soko.driver.csi.SnapshotMetadataService;
import dev.soko.driver.csi.Topology;
import dev.soko.driver.handoff.NodeRequestWatch;
import dev.soko.driver.health.Readiness;
import dev.soko.driver.http.HttpEndpoint;
import dev.soko.driver.kubelet.RegistrationService;
import dev.soko.driver.logging.LogSetup;
import dev.soko.driver.metrics.PrometheusRpcMetrics;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.metrics.StorageGauges;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.report.PoolReporter;
import dev.soko.driver.report.SnapshotHomes;
import dev.soko.driver.server.DriverServer;
import dev.soko.driver.server.SideServer;
import dev.soko.driver.transfer.DataServer;
import dev.soko.driver.transfer.DataTls;
import dev.soko.driver.transfer.SnapshotMetadataRelay;
import dev.soko.driver.transfer.SnapshotReader;
import dev.soko.driver.volume.SnapshotOperations;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeManager;
import io.grpc.BindableService;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entry point: parses flags, wires the services for the mode, serves until SIGTERM, then shuts down
 * gracefully (deregisters from the kubelet, lets in-flight calls finish, then closes the engine).
 * All wiring is here, in plain Java.
 */
public final class Main {
  /** Kubernetes' default termination grace is 30 s; leave room to close the engine after calls. */
  static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(20);

  static final int RPC_THREADS = 16;

  /**
   * What describes another node's snapshot on a node plugin started without the data path's
   * credentials: a restore of a snapshot found on another node fails UNAVAILABLE, saying why.
   */
  static final SnapshotHomes.Describer NO_DATA_PATH =
      (node, endpoint, snapshotId) -> {
        throw new StorageException(
            StorageException.Reason.UNAVAILABLE,
            "snapshot "
                + snapshotId
                + " is on node "
                + node
                + "; this node's driver runs without --data-tls-dir, so it cannot copy it");
      };

  /** As {@link #NO_DATA_PATH}, for a clone of a volume found on another node. */
  static final SnapshotHomes.VolumeDescriber NO_VOLUME_DATA_PATH =
      (node, endpoint, volumeId) -> {
        throw new StorageException(
            StorageException.Reason.UNAVAILABLE,
            "volume "
                + volumeId
                + " is on node "
                + node
                + "; this node's driver runs without --data-tls-dir, so it cannot copy it");
      };

  private Main() {}

  public static void main(String[] args) {
    useUnpooledBuffers();
    int exit = DriverCommand.execute(Main::launch, args);
    // After a SIGTERM the JVM is already exiting; System.exit would then block forever.
    if (exit != 0) {
      System.exit(exit);
    }
  }

  /**
   * CSI messages are small and few, so Netty's pooled allocator buys nothing here, while its first
   * arena chunk costs ~7 MiB of resident memory after the first call (measured). Must run before
   * any gRPC class loads; a value given with {@code -D} wins.
   */
  static void useUnpooledBuffers() {
    if (System.getProperty("io.grpc.netty.useCustomAllocator") == null) {
      System.setProperty("io.grpc.netty.useCustomAllocator", "false");
    }
    if (System.getProperty("io.grpc.netty.shaded.io.netty.allocator.type") == null) {
      System.setProperty("io.grpc.netty.shaded.io.netty.allocator.type", "unpooled");
    }
  }

  static int launch(DriverConfig config) throws InterruptedException {
    LogSetup.setLevel(config.logLevel());
    Logger log = LoggerFactory.getLogger(Main.class);
    Resources resources = new Resources();
    try {
      PrometheusRpcMetrics prometheus =
          config.metricsAddress().isEmpty() ? null : new PrometheusRpcMetrics();
      RpcMetrics metrics = prometheus == null ? RpcMetrics.NONE : prometheus;
      Readiness readiness = Readiness.ALWAYS;
      List<BindableService> services;
      // Before the engine opens: credentials that cannot be used stop the start at once.
      resources.dataTls = DataPort.credentials(config).orElse(null);
      if (config.mode() == DriverConfig.Mode.NODE) {
        ClusterAccess cluster = ClusterAccess.connect(config);
        resources.cluster = cluster;
        SnapshotHomes.Describer describer = NO_DATA_PATH;
        SnapshotHomes.VolumeDescriber volumeDescriber = NO_VOLUME_DATA_PATH;
        if (resources.dataTls != null) {
          // The caller's side of the data path, for a restore of a snapshot (or a clone of a
          // volume) another node holds.
          resources.snapshotReader = new SnapshotReader(resources.dataTls);
          describer = resources.snapshotReader::describe;
          volumeDescriber = resources.snapshotReader::describeVolume;
        }
        VolumeManager volumes =
            VolumeManagers.open(
                config, cluster.labels, cluster.snapshotHomes(config, describer, volumeDescriber));
        resources.volumes = volumes;
        if (prometheus != null) {
          StorageGauges gauges =
              new StorageGauges(prometheus.registry(), config.nodeId(), volumes::metricsView);
          prometheus.beforeScrape(gauges::refresh);
        }
        readiness = volumes::notReady;
        resources.dataServer = DataPort.serve(config, resources.dataTls, volumes, metrics);
        resources.reporter =
            PoolReports.start(
                cluster.api,
                config,
                volumes,
                Optional.ofNullable(resources.dataServer).map(DataServer::endpoint));
        cluster.labelImportedSnapshots(config, volumes);
        resources.modifications =
            Handoffs.carryOut(cluster.api, config, volumes, System.getenv()).orElse(null);
        // Where the node carries out the controller's calls, its groups are the controller's.
        GroupIds groupIds =
            resources.modifications == null ? GroupIds.AS_KEPT : GroupIds.onNode(config.nodeId());
        boolean blockMetadata = volumes.servesBlockMetadata();
        List<BindableService> node = new ArrayList<>();
        node.add(
            new IdentityService(
                config.driverName(), Version.current(), readiness, true, blockMetadata));
        node.add(
            new ControllerService(
                volumes, new Topology(config.nodeId()), new PoolFsTypes(config.pools()), groupIds));
        node.add(new GroupControllerService(volumes, groupIds));
        node.add(
            new NodeService(volumes, config.nodeId(), new PathPolicy(config.allowedPathRoots())));
        if (blockMetadata) {
          node.add(new SnapshotMetadataService(volumes));
        }
        services = List.copyOf(node);
      } else {
        Handoffs.Controller handoffs = Handoffs.route(config, resources.dataTls, System.getenv());
        resources.handoffs = handoffs;
        resources.metadataRelay =
            MetadataRelays.start(config, resources.dataTls, System.getenv()).orElse(null);
        List<BindableService> controller = new ArrayList<>();
        controller.add(
            new IdentityService(
                config.driverName(),
                Version.current(),
                readiness,
                handoffs.snapshots().isPresent(),
                resources.metadataRelay != null));
        controller.add(
            new ClusterControllerService(
                handoffs.expander(),
                handoffs.modifier(),
                handoffs.snapshots().map(s -> (SnapshotOperations) s)));
        handoffs
            .snapshots()
            .ifPresent(s -> controller.add(new GroupControllerService(s, GroupIds.AS_KEPT)));
        if (resources.metadataRelay != null) {
          controller.add(resources.metadataRelay);
        }
        services = List.copyOf(controller);
      }
      resources.server =
          DriverServer.start(
              Endpoint.parse(config.endpoint()), services, metrics, readiness::ready, RPC_THREADS);
      // After the CSI server: /healthz answering ok then also means the CSI socket serves.
      RegistrationService registration =
          config
              .registration()
              .map(r -> new RegistrationService(config.driverName(), r.kubeletEndpoint()))
              .orElse(null);
      Readiness serving =
          registration == null ? readiness : readiness.and(registration.registered());
      resources.http =
          HttpEndpoints.start(config, resources.server, prometheus, readiness, serving);
      if (registration != null) {
        // Only once CSI is served: the kubelet dials the CSI socket as soon as GetInfo answers,
        // and a registration that finds nothing there fails.
        resources.registration = register(resources.server, config, registration);
      }
      log.atInfo()
          .addKeyValue("driver", config.driverName())
          .addKeyValue("version", Version.current())
          .addKeyValue("mode", config.mode().name().toLowerCase(java.util.Locale.ROOT))
          .addKeyValue("node", config.nodeId())
          .log("driver started");
      Runtime.getRuntime().addShutdownHook(new Thread(resources::close, "shutdown"));
      resources.server.awaitTermination();
      return 0;
    } catch (Exception e) {
      log.error("driver failed to start: {}", e.getMessage(), e);
      resources.close();
      return 1;
    }
  }

  private static SideServer register(
      DriverServer server, DriverConfig config, RegistrationService service) throws IOException {
    KubeletRegistration registration = config.registration().orElseThrow();
    SideServer side = server.serveBeside(registration.socket(), service);
    LoggerFactory.getLogger(Main.class)
        .atInfo()
        .addKeyValue("socket", registration.socket())
        .addKeyValue("kubelet_endpoint", registration.kubeletEndpoint())
        .log("serving kubelet registration");
    return side;
  }

  /**
   * What must be closed at shutdown, in order: the registration socket (the kubelet deregisters the
   * driver while it still serves), the HTTP endpoints (they run on the CSI server's threads), the
   * data port and the channels to other nodes' ports, the CSI server, then the engine.
   */
  private static final class Resources {
    volatile SideServer registration;
    volatile DriverServer server;
    volatile VolumeManager volumes;
    volatile PoolReporter reporter;
    volatile ClusterAccess cluster;
    volatile NodeRequestWatch modifications;
    volatile Handoffs.Controller handoffs;
    volatile DataTls dataTls;
    volatile DataServer dataServer;
    volatile SnapshotReader snapshotReader;
    volatile SnapshotMetadataRelay metadataRelay;
    volatile List<HttpEndpoint> http = List.of();

    void close() {
      Logger log = LoggerFactory.getLogger(Main.class);
      log.info("shutting down");
      try {
        if (registration != null) {
          registration.close();
          log.atInfo()
              .addKeyValue("socket", registration.socket())
              .log("removed the kubelet registration socket");
        }
        if (modifications != null) {
          modifications.close();
        }
        if (handoffs != null) {
          handoffs.close();
        }
        if (reporter != null) {
          reporter.close();
        }
        if (cluster != null) {
          cluster.close();
        }
        http.forEach(HttpEndpoint::close);
        if (dataServer != null) {
          dataServer.close();
        }
        if (snapshotReader != null) {
          snapshotReader.close();
        }
        if (metadataRelay != null) {
          metadataRelay.close();
        }
        if (dataTls != null) {
          dataTls.close();
        }
        if (server != null) {
          server.shutdown(SHUTDOWN_GRACE);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        if (volumes != null) {
          try {
            volumes.close();
          } catch (RuntimeException e) {
            log.warn("closing the volume manager failed", e);
          }
        }
      }
      log.info("stopped");
    }
  }
}

package dev.soko.driver;

import dev.soko.driver.cli.DriverCommand;
import dev.soko.driver.cli.HostPort;
import dev.soko.driver.cli.Version;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.csi.ClusterControllerService;
import dev.soko.driver.csi.ControllerService;
import dev.soko.driver.csi.IdentityService;
import dev.soko.driver.csi.NodeService;
import dev.soko.driver.csi.PoolFsTypes;
import dev.soko.driver.csi.Topology;
import dev.soko.driver.metrics.MetricsServer;
import dev.soko.driver.metrics.PrometheusRpcMetrics;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.server.DriverServer;
import dev.soko.driver.server.Endpoint;
import dev.soko.driver.volume.VolumeManager;
import io.grpc.BindableService;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entry point: parses flags, wires the services for the mode, serves until SIGTERM, then shuts down
 * gracefully (in-flight calls finish, then the engine closes). All wiring is here, in plain Java.
 */
public final class Main {
  /** Kubernetes' default termination grace is 30 s; leave room to close the engine after calls. */
  static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(20);

  static final int RPC_THREADS = 16;

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
    Logger log = LoggerFactory.getLogger(Main.class);
    Resources resources = new Resources();
    try {
      RpcMetrics metrics = RpcMetrics.NONE;
      if (!config.metricsAddress().isEmpty()) {
        PrometheusRpcMetrics prometheus = new PrometheusRpcMetrics();
        InetSocketAddress address = HostPort.parse(config.metricsAddress());
        resources.metrics =
            MetricsServer.start(
                new InetSocketAddress(address.getHostString(), address.getPort()),
                prometheus::scrape);
        metrics = prometheus;
        log.atInfo().addKeyValue("address", resources.metrics.address()).log("serving metrics");
      }
      BooleanSupplier ready = () -> true;
      List<BindableService> services;
      if (config.mode() == DriverConfig.Mode.NODE) {
        VolumeManager volumes = VolumeManagers.open(config);
        resources.volumes = volumes;
        ready = volumes::ready;
        services =
            List.of(
                new IdentityService(config.driverName(), Version.current(), ready),
                new ControllerService(
                    volumes, new Topology(config.nodeId()), new PoolFsTypes(config.pools())),
                new NodeService(
                    volumes, config.nodeId(), new PathPolicy(config.allowedPathRoots())));
      } else {
        services =
            List.of(
                new IdentityService(config.driverName(), Version.current(), ready),
                new ClusterControllerService());
      }
      resources.server =
          DriverServer.start(
              Endpoint.parse(config.endpoint()), services, metrics, ready, RPC_THREADS);
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

  /** What must be closed at shutdown, in order: stop serving, then the engine, then metrics. */
  private static final class Resources {
    volatile DriverServer server;
    volatile VolumeManager volumes;
    volatile MetricsServer metrics;

    void close() {
      Logger log = LoggerFactory.getLogger(Main.class);
      log.info("shutting down");
      try {
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
        if (metrics != null) {
          metrics.close();
        }
      }
      log.info("stopped");
    }
  }
}

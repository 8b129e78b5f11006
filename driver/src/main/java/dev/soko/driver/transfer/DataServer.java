package dev.soko.driver.transfer;

import csi.v1.SnapshotMetadataGrpc;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.cli.HostPort;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.csi.SnapshotMetadataService;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.server.RpcInterceptor;
import dev.soko.driver.volume.GroupParts;
import dev.soko.driver.volume.SnapshotBlocks;
import dev.soko.driver.volume.SnapshotImages;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's data port: the SnapshotData service, and where the node serves block metadata the CSI
 * SnapshotMetadata service for the controller's {@link SnapshotMetadataRelay}, over TCP with mutual
 * TLS ({@link DataTls}), each method open to the roles that need it ({@link RoleCheck}) and behind
 * the driver's error boundary, logs and metrics ({@link RpcInterceptor}). Its calls run on a few
 * threads of their own, so a large copy never takes a thread the CSI calls need.
 */
public final class DataServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DataServer.class);

  /**
   * Node plugins read each other's snapshots and volumes (restores and clones across nodes); the
   * controller reads snapshots, and relays the block metadata of a node's snapshots to the sidecar,
   * which only it talks to.
   */
  static final Map<String, Set<String>> ROLES_BY_METHOD =
      Map.of(
          SnapshotDataGrpc.getDescribeMethod().getFullMethodName(),
          Roles.ALL,
          SnapshotDataGrpc.getReadMethod().getFullMethodName(),
          Roles.ALL,
          SnapshotDataGrpc.getDescribeVolumeMethod().getFullMethodName(),
          Set.of(Roles.NODE),
          SnapshotDataGrpc.getReadVolumeMethod().getFullMethodName(),
          Set.of(Roles.NODE),
          SnapshotDataGrpc.getReadTreeMethod().getFullMethodName(),
          Set.of(Roles.NODE),
          SnapshotDataGrpc.getReadVolumeTreeMethod().getFullMethodName(),
          Set.of(Roles.NODE),
          SnapshotMetadataGrpc.getGetMetadataAllocatedMethod().getFullMethodName(),
          Set.of(Roles.CONTROLLER),
          SnapshotMetadataGrpc.getGetMetadataDeltaMethod().getFullMethodName(),
          Set.of(Roles.CONTROLLER));

  /**
   * The streams of data and of block metadata, which {@link ReadLimit} bounds: each holds a file
   * open and reads the pool's disk for as long as its reader takes.
   */
  static final Set<String> READS =
      Set.of(
          SnapshotDataGrpc.getReadMethod().getFullMethodName(),
          SnapshotDataGrpc.getReadVolumeMethod().getFullMethodName(),
          SnapshotDataGrpc.getReadTreeMethod().getFullMethodName(),
          SnapshotDataGrpc.getReadVolumeTreeMethod().getFullMethodName(),
          SnapshotMetadataGrpc.getGetMetadataAllocatedMethod().getFullMethodName(),
          SnapshotMetadataGrpc.getGetMetadataDeltaMethod().getFullMethodName());

  /**
   * The threads that run the port's calls. A stream takes one only while it makes its next messages
   * (it is sent at its reader's pace, {@link ChunkReply}), so these bound the reads in progress at
   * an instant and {@link ReadLimit} the streams open.
   */
  static final int THREADS = 4;

  /** Requests are a snapshot ID and an offset; anything larger is not a caller of ours. */
  static final int MAX_REQUEST_BYTES = 16 * 1024;

  static final Duration GRACE = Duration.ofSeconds(5);

  private final Server server;
  private final ExecutorService executor;
  private final String endpoint;

  private DataServer(Server server, ExecutorService executor, String endpoint) {
    this.server = server;
    this.executor = executor;
    this.endpoint = endpoint;
  }

  /**
   * What the port serves.
   *
   * @param images the node's snapshots and volumes, always served
   * @param blocks the SnapshotMetadata service's source, or null for a node whose pools give no
   *     block metadata (the relayed call then answers UNIMPLEMENTED)
   * @param parts the controller's group snapshots across nodes, or null where none are taken
   * @param maxReads the most streams of data and block metadata served at once
   */
  public record Served(
      SnapshotImages images, SnapshotBlocks blocks, GroupParts parts, int maxReads) {

    /** Snapshots and volumes alone, with the default limit of reads. */
    public static Served images(SnapshotImages images) {
      return new Served(images, null, null, DriverConfig.DEFAULT_DATA_MAX_READS);
    }
  }

  /**
   * Serves {@code served} at {@code address} ({@code host:port}; port 0 picks a free one) for
   * {@code node}.
   */
  public static DataServer start(
      String address, DataTls tls, Served served, String node, RpcMetrics metrics)
      throws IOException {
    InetSocketAddress unresolved = HostPort.parse(address);
    InetSocketAddress bind =
        new InetSocketAddress(unresolved.getHostString(), unresolved.getPort());
    if (bind.isUnresolved()) {
      throw new IOException("--data-address: cannot resolve " + unresolved.getHostString());
    }
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), daemonThreads());
    executor.allowCoreThreadTimeOut(true);
    ReadLimit limit = new ReadLimit(READS, served.maxReads(), node);
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(bind, tls.serverCredentials())
            .addService(
                guarded(
                    new SnapshotDataService(served.images(), node).bindService(), limit, metrics));
    if (served.blocks() != null) {
      builder.addService(
          guarded(new SnapshotMetadataService(served.blocks()).bindService(), limit, metrics));
    }
    if (served.parts() != null) {
      builder.addService(
          ServerInterceptors.intercept(
              new GroupPartService(served.parts()).bindService(),
              new RoleCheck(GroupPartService.ROLES_BY_METHOD),
              new RpcInterceptor(metrics)));
    }
    Server server = builder.executor(executor).maxInboundMessageSize(MAX_REQUEST_BYTES).build();
    try {
      server.start();
    } catch (IOException e) {
      executor.shutdownNow();
      throw new IOException("cannot serve the data port at " + address + ": " + e.getMessage(), e);
    }
    String endpoint = hostPart(address) + ":" + server.getPort();
    LOG.atInfo().addKeyValue("endpoint", endpoint).log("serving the data port (mutual TLS)");
    return new DataServer(server, executor, endpoint);
  }

  /**
   * The role check runs inside the error boundary, so a refusal is logged and counted like every
   * other answer; the read limit inside the role check, so a caller that may not read takes no
   * slot.
   */
  private static ServerServiceDefinition guarded(
      ServerServiceDefinition service, ReadLimit limit, RpcMetrics metrics) {
    return ServerInterceptors.intercept(
        service, limit, new RoleCheck(ROLES_BY_METHOD), new RpcInterceptor(metrics));
  }

  /** Where peers reach this port: the host as given, the port as bound. */
  public String endpoint() {
    return endpoint;
  }

  private static String hostPart(String address) {
    return address.substring(0, address.lastIndexOf(':'));
  }

  /** Stops taking calls, lets running reads finish for {@link #GRACE}, then cuts the rest. */
  @Override
  public void close() {
    server.shutdown();
    try {
      if (!server.awaitTermination(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        server.shutdownNow();
        server.awaitTermination(GRACE.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    executor.shutdownNow();
    LOG.atInfo().addKeyValue("endpoint", endpoint).log("stopped serving the data port");
  }

  private static java.util.concurrent.ThreadFactory daemonThreads() {
    AtomicInteger counter = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, "data-rpc-" + counter.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}

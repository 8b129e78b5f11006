package dev.soko.driver.server;

import io.grpc.Server;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gRPC server on a second socket beside the CSI one; made by {@link DriverServer#serveBeside}.
 */
public final class SideServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SideServer.class);

  private final Path socket;
  private final Server server;

  SideServer(Path socket, Server server) {
    this.socket = socket;
    this.server = server;
  }

  public Path socket() {
    return socket;
  }

  /**
   * Stops serving, then removes the socket file. Whoever watches the directory (the kubelet's
   * plugin watcher) sees the file go before the CSI server it points to stops: close this first. A
   * socket another process listens on by then (a new pod's driver bound the path) is left alone:
   * removing it would deregister that process's driver.
   */
  @Override
  public void close() {
    server.shutdown();
    try {
      if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    try {
      if (!SocketGuard.removeIfDead(socket)) {
        LOG.info("left {} in place: another server listens on it", socket);
      }
    } catch (IOException e) {
      LOG.warn("could not remove socket {}", socket, e);
    }
  }
}

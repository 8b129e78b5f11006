package dev.soko.driver.server;

import io.grpc.Server;
import java.io.IOException;
import java.nio.file.Files;
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
   * Removes the socket file first, then stops serving. Whoever watches the directory (the kubelet's
   * plugin watcher) sees the file go at once, before the CSI server it points to stops.
   */
  @Override
  public void close() {
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      LOG.warn("could not remove socket {}", socket, e);
    }
    server.shutdown();
    try {
      if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}

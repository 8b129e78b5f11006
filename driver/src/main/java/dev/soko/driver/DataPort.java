package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.transfer.DataServer;
import dev.soko.driver.transfer.DataTls;
import dev.soko.driver.volume.SnapshotBlocks;
import dev.soko.driver.volume.VolumeManager;
import java.io.IOException;
import java.util.Optional;

/**
 * Starts the node-to-node data path from the flags: the credentials of {@code --data-tls-dir}
 * (either mode: the controller calls nodes' ports) and, in node mode with {@code --data-address},
 * the data port, which also serves the node's block metadata to the controller's relay. Missing or
 * unusable credentials stop the driver from starting, with the file named, rather than run a port
 * no peer could use.
 */
final class DataPort {
  private DataPort() {}

  static Optional<DataTls> credentials(DriverConfig config) throws IOException {
    if (config.dataTlsDir().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(DataTls.load(config.dataTlsDir().get()));
  }

  /** The running data port, or null when {@code --data-address} is not given. */
  static DataServer serve(
      DriverConfig config, DataTls tls, VolumeManager volumes, RpcMetrics metrics)
      throws IOException {
    if (config.dataAddress().isEmpty()) {
      return null;
    }
    if (tls == null) {
      // The command line refuses this already; a configuration built in code may not.
      throw new IOException(
          "--data-address needs --data-tls-dir: the data port serves mutual TLS only");
    }
    SnapshotBlocks blocks = volumes.servesBlockMetadata() ? volumes : null;
    return DataServer.start(
        config.dataAddress(),
        tls,
        new DataServer.Served(volumes, blocks, volumes, config.dataMaxReads()),
        config.nodeId(),
        metrics);
  }
}

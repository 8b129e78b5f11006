package dev.soko.driver.bench;

import dev.soko.driver.config.Endpoint;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.report.SnapshotHomes.Home;
import dev.soko.driver.server.DriverServer;
import dev.soko.driver.transfer.DataTls;
import dev.soko.driver.transfer.SnapshotMetadataRelay;
import dev.soko.driver.transfer.TestCertificates;
import io.grpc.BindableService;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The controller's SnapshotMetadata relay in a process of its own, for hack/bench-cbt.sh: it makes
 * the data path's certificates (a CA, a node's and the controller's), serves the relay on a CSI
 * socket as the controller does, and forwards every call to one node's data port over mutual TLS,
 * as if the API server had named that node as every snapshot's home. Runs until it is killed.
 *
 * <p>Usage: {@code RelayHost SOCKET CERTS_DIR NODE DATA_ENDPOINT}: {@code CERTS_DIR/node} then
 * holds the node's credentials ({@code --data-tls-dir}) and {@code CERTS_DIR/controller} the
 * relay's.
 */
public final class RelayHost {
  private RelayHost() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: RelayHost SOCKET CERTS_DIR NODE DATA_ENDPOINT");
      System.exit(2);
    }
    Path certs = Path.of(args[1]);
    TestCertificates.Ca ca = TestCertificates.ca("bench-data-ca");
    TestCertificates.directory(certs.resolve("node"), ca, "soko-node");
    Home home = new Home(args[2], args[3]);
    try (DataTls tls =
            DataTls.load(
                TestCertificates.directory(certs.resolve("controller"), ca, "soko-controller"));
        SnapshotMetadataRelay relay =
            new SnapshotMetadataRelay(snapshot -> Optional.of(home), tls)) {
      List<BindableService> services = List.of(relay);
      DriverServer server =
          DriverServer.start(
              Endpoint.parse("unix://" + args[0]), services, RpcMetrics.NONE, () -> true, 4);
      server.awaitTermination();
    }
  }
}

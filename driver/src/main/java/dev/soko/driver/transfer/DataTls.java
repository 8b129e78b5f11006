package dev.soko.driver.transfer;

import io.grpc.ChannelCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The data path's credentials, from a directory of PEM files: {@code tls.crt} and {@code tls.key}
 * (this component's certificate, whose CN is its role, and its PKCS#8 key) and {@code ca.crt} (the
 * CA certificates peers are verified against). The same credentials serve the data port and call
 * other nodes' ports. Peers are verified by their chain only, never by host name: a certificate
 * names a role, not a node, and nodes are dialled by pod IP.
 *
 * <p>The files are read again every {@link #RELOAD}: the operator renews a certificate at two
 * thirds of its life (days before it expires) and the kubelet takes up to about a minute to update
 * a mounted Secret, so a minute more costs nothing, while re-reading three small files once a
 * minute costs nothing either; a renewal restarts no process and drops no connection.
 */
public final class DataTls implements AutoCloseable {
  static final Duration RELOAD = Duration.ofMinutes(1);
  static final String CERTIFICATE = "tls.crt";
  static final String KEY = "tls.key";
  static final String CA = "ca.crt";

  private final AdvancedTlsX509KeyManager keys;
  private final AdvancedTlsX509TrustManager trust;
  private final ScheduledExecutorService reloads;
  private final List<AutoCloseable> reloading;

  private DataTls(
      AdvancedTlsX509KeyManager keys,
      AdvancedTlsX509TrustManager trust,
      ScheduledExecutorService reloads,
      List<AutoCloseable> reloading) {
    this.keys = keys;
    this.trust = trust;
    this.reloads = reloads;
    this.reloading = reloading;
  }

  /**
   * Reads the credentials in {@code dir} and re-reads them every {@link #RELOAD}; throws, naming
   * the file, when one is missing or cannot be used, so that a driver never starts a port that no
   * peer could talk to.
   */
  public static DataTls load(Path dir) throws IOException {
    for (String name : List.of(CERTIFICATE, KEY, CA)) {
      Path file = dir.resolve(name);
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        throw new IOException(
            "the data path's credentials are incomplete: "
                + file
                + " is missing or unreadable ("
                + dir
                + " must hold "
                + CERTIFICATE
                + ", "
                + KEY
                + " and "
                + CA
                + ")");
      }
    }
    ScheduledExecutorService reloads =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "data-tls-reload");
              t.setDaemon(true);
              return t;
            });
    List<AutoCloseable> reloading = new ArrayList<>();
    try {
      AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
      reloading.add(
          keys.updateIdentityCredentials(
                  dir.resolve(CERTIFICATE).toFile(),
                  dir.resolve(KEY).toFile(),
                  RELOAD.toSeconds(),
                  TimeUnit.SECONDS,
                  reloads)
              ::close);
      AdvancedTlsX509TrustManager trust =
          AdvancedTlsX509TrustManager.newBuilder()
              .setVerification(
                  AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
              .build();
      reloading.add(
          trust.updateTrustCredentials(
                  dir.resolve(CA).toFile(), RELOAD.toSeconds(), TimeUnit.SECONDS, reloads)
              ::close);
      return new DataTls(keys, trust, reloads, reloading);
    } catch (GeneralSecurityException | IOException | RuntimeException e) {
      reloads.shutdownNow();
      throw new IOException(
          "cannot use the data path's credentials in "
              + dir
              + " ("
              + KEY
              + " must be a PKCS#8 PEM key of "
              + CERTIFICATE
              + "): "
              + e.getMessage(),
          e);
    }
  }

  /** The data port's side: this certificate, and a peer certificate of the CA required. */
  ServerCredentials serverCredentials() {
    return TlsServerCredentials.newBuilder()
        .keyManager(keys)
        .trustManager(trust)
        .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
        .build();
  }

  /** A caller's side: this certificate presented, the port's verified against the CA. */
  ChannelCredentials channelCredentials() {
    return TlsChannelCredentials.newBuilder().keyManager(keys).trustManager(trust).build();
  }

  @Override
  public void close() {
    for (AutoCloseable closeable : reloading) {
      try {
        closeable.close();
      } catch (Exception e) {
        // Only stops a scheduled re-read; the executor goes below anyway.
      }
    }
    reloads.shutdownNow();
  }
}

package dev.soko.operator.runtime;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** /healthz, /readyz and /metrics (Prometheus) on the JDK's HTTP server: no extra framework. */
public final class HealthServer implements AutoCloseable {
  private final HttpServer server;

  public HealthServer(
      InetSocketAddress address,
      BooleanSupplier live,
      BooleanSupplier ready,
      Supplier<String> metrics)
      throws IOException {
    server = HttpServer.create(address, 0);
    server.createContext("/healthz", ex -> answer(ex, live.getAsBoolean(), "ok\n"));
    server.createContext("/readyz", ex -> answer(ex, ready.getAsBoolean(), "ok\n"));
    server.createContext("/metrics", ex -> answer(ex, true, metrics.get()));
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static void answer(HttpExchange ex, boolean ok, String body) throws IOException {
    byte[] bytes = (ok ? body : "not ready\n").getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    ex.sendResponseHeaders(ok ? 200 : 503, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

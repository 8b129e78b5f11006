package dev.soko.driver.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/** A minimal HTTP endpoint serving {@code GET /metrics}; the JDK's server keeps the jar small. */
public final class MetricsServer implements AutoCloseable {
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final HttpServer server;

  private MetricsServer(HttpServer server) {
    this.server = server;
  }

  /**
   * @param address {@code host:port}; port 0 picks a free port
   */
  public static MetricsServer start(InetSocketAddress address, Supplier<String> scrape)
      throws IOException {
    HttpServer server = HttpServer.create(address, 8);
    server.createContext("/metrics", exchange -> handle(exchange, scrape));
    server.createContext("/", exchange -> respond(exchange, 404, "not found; try /metrics\n"));
    server.setExecutor(null); // the server's own single dispatcher thread
    server.start();
    return new MetricsServer(server);
  }

  private static void handle(HttpExchange exchange, Supplier<String> scrape) throws IOException {
    if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
      respond(exchange, 405, "only GET\n");
      return;
    }
    exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
    respond(exchange, 200, scrape.get());
  }

  private static void respond(HttpExchange exchange, int code, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(code, head ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      if (!head) {
        out.write(bytes);
      }
    }
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

package dev.soko.driver.report;

import com.sun.net.httpserver.HttpServer;
import dev.soko.driver.kube.KubeApi;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A JDK HTTP server on 127.0.0.1 that records every request and answers with a set status, or with
 * what {@link #answers} says (a watch's events are the lines of one body, after which the server
 * ends the watch). Requests are served concurrently, so an answer may wait without holding up
 * another request.
 */
final class ApiServerFake implements AutoCloseable {
  record Request(
      String method, String uri, String contentType, String authorization, String body) {}

  /** An answer to one request. */
  record Answer(int status, String body) {}

  final BlockingQueue<Request> requests = new LinkedBlockingQueue<>();

  /** Every request so far, in order, whether or not {@link #next} took it. */
  final List<Request> seen = new java.util.concurrent.CopyOnWriteArrayList<>();

  volatile int status = 200;

  /** What to answer; by default {@link #status} with an empty object. */
  volatile Function<Request, Answer> answers = request -> new Answer(status, "{}");

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  ApiServerFake() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(threads);
    server.createContext(
        "/",
        exchange -> {
          Request request =
              new Request(
                  exchange.getRequestMethod(),
                  exchange.getRequestURI().toString(),
                  exchange.getRequestHeaders().getFirst("Content-Type"),
                  exchange.getRequestHeaders().getFirst("Authorization"),
                  new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
          seen.add(request);
          requests.add(request);
          Answer answer = answers.apply(request);
          byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(answer.status(), body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** A client of this server with a token file holding {@code token}. */
  KubeApi client(Path dir, String token) throws IOException {
    Path file = Files.writeString(dir.resolve("token"), token + "\n");
    return KubeApi.fromEnvironment(
            java.util.Map.of(
                "SOKO_KUBE_API", url().toString(), "SOKO_KUBE_TOKEN_FILE", file.toString()))
        .orElseThrow();
  }

  Request next() throws InterruptedException {
    Request r = requests.poll(10, TimeUnit.SECONDS);
    if (r == null) {
      throw new AssertionError("no request within 10 s");
    }
    return r;
  }

  List<Request> drain() {
    List<Request> all = new java.util.ArrayList<>();
    requests.drainTo(all);
    return all;
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}

package dev.soko.driver.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The endpoint on a real event loop and call executor, as the CSI server lends them. */
class HttpEndpointTest {
  private final HttpClient client = HttpClient.newHttpClient();
  private final AtomicInteger calls = new AtomicInteger();
  private final CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch slowStarted = new CountDownLatch(HttpEndpoint.MAX_CONCURRENT);
  private final EventLoopGroup eventLoop = new EpollEventLoopGroup(1);
  private final ExecutorService callThreads = Executors.newCachedThreadPool();
  private HttpEndpoint endpoint;

  @BeforeEach
  void start() throws Exception {
    endpoint =
        HttpEndpoint.start(
            eventLoop,
            callThreads,
            new InetSocketAddress("127.0.0.1", 0),
            Map.of(
                "/a",
                () -> {
                  calls.incrementAndGet();
                  return HttpEndpoint.Reply.text(200, "answer a");
                },
                "/slow",
                () -> {
                  slowStarted.countDown();
                  try {
                    release.await(10, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  return HttpEndpoint.Reply.text(200, "slow");
                },
                "/broken",
                () -> {
                  throw new IllegalStateException("secret detail /var/lib/pool");
                }));
  }

  @AfterEach
  void stop() {
    release.countDown();
    endpoint.close();
    callThreads.shutdownNow();
    eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + endpoint.address().getPort() + path);
  }

  private HttpResponse<String> send(String method, String path) throws Exception {
    return client.send(
        HttpRequest.newBuilder(uri(path))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .timeout(java.time.Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aRouteAnswersItsExactPathWithItsCodeBodyAndContentType() throws Exception {
    HttpResponse<String> response = send("GET", "/a?verbose=1");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("answer a");
    assertThat(response.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
  }

  @Test
  void pathsThatOnlyStartWithARouteAreNotFoundAndNeverCallIt() throws Exception {
    for (String path : new String[] {"/", "/ab", "/a/", "/a/b", "/other"}) {
      HttpResponse<String> response = send("GET", path);
      assertThat(response.statusCode()).as(path).isEqualTo(404);
      assertThat(response.body()).as(path).contains("/a");
    }
    assertThat(calls).hasValue(0);
  }

  @Test
  void onlyGetAndHeadAreAnswered() throws Exception {
    assertThat(send("POST", "/a").statusCode()).isEqualTo(405);
    assertThat(send("DELETE", "/a").statusCode()).isEqualTo(405);
    HttpResponse<String> head = send("HEAD", "/a");
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    assertThat(calls).hasValue(1);
  }

  @Test
  void aRouteThatThrowsAnswers500WithoutItsMessage() throws Exception {
    HttpResponse<String> response = send("GET", "/broken");
    assertThat(response.statusCode()).isEqualTo(500);
    assertThat(response.body()).contains("see the driver log").doesNotContain("/var/lib/pool");
    assertThat(send("GET", "/a").statusCode()).as("still serving").isEqualTo(200);
  }

  @Test
  void requestsBeyondAPathsConcurrencyLimitAre503AtOnceAndOtherPathsStillAnswer() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
    for (int i = 0; i < HttpEndpoint.MAX_CONCURRENT; i++) {
      slow.add(
          client.sendAsync(
              HttpRequest.newBuilder(uri("/slow")).build(), HttpResponse.BodyHandlers.ofString()));
    }
    assertThat(slowStarted.await(10, TimeUnit.SECONDS)).isTrue();
    HttpResponse<String> refused = send("GET", "/slow");
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(send("GET", "/a").statusCode())
        .as("other paths keep their own limit")
        .isEqualTo(200);

    release.countDown();
    for (var response : slow) {
      assertThat(response.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    assertThat(send("GET", "/slow").statusCode()).as("permits come back").isEqualTo(200);
  }

  @Test
  void anOversizedOrMalformedRequestIsRefusedAndTheEndpointServesOn() throws Exception {
    String huge = "GET /a HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(20_000) + "\r\n\r\n";
    assertThat(rawStatusLine(huge)).isEqualTo("HTTP/1.1 400 Bad Request");
    assertThat(rawStatusLine("NONSENSE\r\n\r\n")).isEqualTo("HTTP/1.1 400 Bad Request");
    assertThat(calls).hasValue(0);
    assertThat(send("GET", "/a").statusCode()).isEqualTo(200);
  }

  /** The status line the server sends for {@code request}, or "" when it just closes. */
  private String rawStatusLine(String request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", endpoint.address().getPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      try {
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        out.flush();
      } catch (java.io.IOException closedEarly) {
        return "";
      }
      InputStream in = socket.getInputStream();
      byte[] buffer = new byte[256];
      int n = in.read(buffer);
      return n <= 0
          ? ""
          : new String(buffer, 0, n, StandardCharsets.US_ASCII).lines().findFirst().orElse("");
    } catch (java.net.SocketException reset) {
      return "";
    }
  }
}

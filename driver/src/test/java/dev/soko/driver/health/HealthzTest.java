package dev.soko.driver.health;

import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import dev.soko.driver.csi.IdentityService;
import dev.soko.driver.http.HttpEndpoint;
import dev.soko.driver.testing.CsiHarness;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class HealthzTest {
  private final AtomicReference<String> missing = new AtomicReference<>();
  private final Readiness readiness = () -> Optional.ofNullable(missing.get());

  @Test
  void answersOkWhenReadyAnd500WithTheReasonWhenNot() {
    Healthz healthz = Healthz.liveness(readiness);
    assertThat(healthz.answer()).isEqualTo(HttpEndpoint.Reply.text(200, "ok"));
    missing.set("pools not usable yet: fast (the driver log says why)");
    HttpEndpoint.Reply reply = healthz.answer();
    assertThat(reply.code()).isEqualTo(500);
    assertThat(reply.body()).isEqualTo("pools not usable yet: fast (the driver log says why)\n");
  }

  @Test
  void readinessAnswersTheFirstReasonOfEitherCheck() {
    AtomicReference<String> unregistered = new AtomicReference<>("not registered yet");
    Healthz readyz =
        Healthz.readiness(readiness.and(() -> Optional.ofNullable(unregistered.get())));
    missing.set("pools not usable yet: fast");
    assertThat(readyz.answer().body()).isEqualTo("pools not usable yet: fast\n");
    missing.set(null);
    assertThat(readyz.answer().body()).isEqualTo("not registered yet\n");
    unregistered.set(null);
    assertThat(readyz.answer()).isEqualTo(HttpEndpoint.Reply.text(200, "ok"));
  }

  @Test
  void healthzOverHttpAndProbeOverGrpcAnswerFromTheSameReadiness() throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    EventLoopGroup eventLoop = new EpollEventLoopGroup(1);
    ExecutorService calls = Executors.newSingleThreadExecutor();
    try (CsiHarness csi = new CsiHarness(new IdentityService("csi.soko.dev", "t", readiness));
        HttpEndpoint http =
            HttpEndpoint.start(
                eventLoop,
                calls,
                new InetSocketAddress("127.0.0.1", 0),
                Map.of(Healthz.PATH, Healthz.liveness(readiness)))) {
      URI healthzUri = URI.create("http://127.0.0.1:" + http.address().getPort() + "/healthz");
      HttpRequest get = HttpRequest.newBuilder(healthzUri).build();
      Csi.ProbeRequest probe = Csi.ProbeRequest.getDefaultInstance();

      HttpResponse<String> ok = client.send(get, HttpResponse.BodyHandlers.ofString());
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("ok");
      assertThat(csi.identity().probe(probe).getReady().getValue()).isTrue();

      missing.set("pools not usable yet: p");
      HttpResponse<String> notReady = client.send(get, HttpResponse.BodyHandlers.ofString());
      assertThat(notReady.statusCode()).isEqualTo(500);
      assertThat(notReady.body()).contains("pools not usable yet: p");
      assertThat(csi.identity().probe(probe).getReady().getValue()).isFalse();

      HttpResponse<String> other =
          client.send(
              HttpRequest.newBuilder(healthzUri.resolve("/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(other.statusCode()).isEqualTo(404);
    } finally {
      calls.shutdownNow();
      eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }
}

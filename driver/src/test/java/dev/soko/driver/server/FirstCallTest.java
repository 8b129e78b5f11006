package dev.soko.driver.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.Endpoint;
import dev.soko.driver.csi.IdentityService;
import dev.soko.driver.metrics.RpcMetrics;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hand-made HTTP/2 Probe against the real server on a real Unix socket. */
class FirstCallTest {
  @TempDir Path temp;
  private final List<String> recorded = new CopyOnWriteArrayList<>();
  private final RpcMetrics metrics = (method, code, nanos) -> recorded.add(method + "=" + code);

  @Test
  void theDriverAnswersTheProbeAndCountsIt() throws Exception {
    Path socket = temp.resolve("csi.sock");
    DriverServer server =
        DriverServer.start(
            new Endpoint(socket),
            List.of(new IdentityService("csi.soko.dev", "t", Optional::empty)),
            metrics,
            () -> true,
            4);
    try {
      FirstCall.probe(socket);
    } finally {
      server.shutdown(Duration.ofSeconds(5));
    }
    assertThat(recorded).singleElement().asString().contains("Probe").endsWith("=OK");
  }

  @Test
  void noDriverOnTheSocketIsAnError() {
    assertThatThrownBy(() -> FirstCall.probe(temp.resolve("absent.sock")))
        .isInstanceOf(IOException.class);
  }
}

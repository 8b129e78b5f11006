package dev.soko.driver.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import csi.v1.Csi;
import dev.soko.driver.csi.NodeService;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.testing.Caps;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.testing.FakeVolumeManager;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** What the interceptor logs: method, code and duration; never a request's secrets or context. */
class RpcLoggingTest {
  @TempDir Path temp;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private final Logger rpcLogger = (Logger) LoggerFactory.getLogger("dev.soko.driver.rpc");
  private final List<String> metrics = new ArrayList<>();
  private final FakeVolumeManager engine = new FakeVolumeManager();
  private CsiHarness harness;
  private Path root;

  @BeforeEach
  void start() throws Exception {
    appender.start();
    rpcLogger.addAppender(appender);
    rpcLogger.setLevel(Level.DEBUG);
    root = Files.createDirectories(temp.resolve("k"));
    harness =
        new CsiHarness(
            (method, code, nanos) -> metrics.add(method + "=" + code),
            List.of(new NodeService(engine, "n", new PathPolicy(List.of(root)))));
  }

  @AfterEach
  void stop() throws Exception {
    rpcLogger.detachAppender(appender);
    rpcLogger.setLevel(null);
    harness.close();
  }

  private static String everything(ILoggingEvent event) {
    String pairs =
        event.getKeyValuePairs() == null
            ? ""
            : event.getKeyValuePairs().stream()
                .map(p -> p.key + "=" + p.value)
                .collect(Collectors.joining(" "));
    return event.getFormattedMessage() + " " + pairs;
  }

  private Map<String, Object> pairs(ILoggingEvent event) {
    return event.getKeyValuePairs().stream().collect(Collectors.toMap(p -> p.key, p -> p.value));
  }

  @Test
  void logsOutcomeButNeverSecretsOrVolumeContext() {
    Csi.NodeStageVolumeRequest.Builder request =
        Csi.NodeStageVolumeRequest.newBuilder()
            .setVolumeId("vol-1")
            .setStagingTargetPath(root.resolve("s").toString())
            .setVolumeCapability(Caps.mount("ext4"))
            .putSecrets("password", "hunter2-secret")
            .putVolumeContext("token", "context-secret")
            .putPublishContext("key", "publish-secret");
    harness.node().nodeStageVolume(request.build());
    catchThrowableOfType(
        StatusRuntimeException.class,
        () -> harness.node().nodeStageVolume(request.setStagingTargetPath("/etc").build()));

    assertThat(appender.list).hasSize(2);
    ILoggingEvent ok = appender.list.get(0);
    assertThat(ok.getLevel()).isEqualTo(Level.DEBUG);
    assertThat(pairs(ok)).containsEntry("method", "NodeStageVolume").containsEntry("code", "OK");
    assertThat(pairs(ok)).containsKey("duration_ms");
    ILoggingEvent failed = appender.list.get(1);
    assertThat(failed.getLevel()).isEqualTo(Level.WARN);
    assertThat(pairs(failed)).containsEntry("code", "INVALID_ARGUMENT");
    for (ILoggingEvent event : appender.list) {
      assertThat(everything(event)).doesNotContain("secret");
    }
    assertThat(metrics).containsExactly("NodeStageVolume=OK", "NodeStageVolume=INVALID_ARGUMENT");
  }
}

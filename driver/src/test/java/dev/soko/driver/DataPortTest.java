package dev.soko.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.metrics.RpcMetrics;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataPortTest {
  @TempDir Path dir;

  DriverConfig node() {
    return DriverConfig.node(
        "csi.soko.dev", "node-a", "unix:///csi/csi.sock", List.of(), List.of(), 0);
  }

  @Test
  void withoutTheFlagsThereIsNoDataPathAtAll() throws Exception {
    assertThat(DataPort.credentials(node())).isEmpty();
    assertThat(DataPort.serve(node(), null, null, RpcMetrics.NONE)).isNull();
  }

  @Test
  void aDriverWhoseCredentialsAreMissingRefusesToStartNamingTheFile() {
    DriverConfig config = node().withDataPort("127.0.0.1:0", dir);
    assertThatThrownBy(() -> DataPort.credentials(config))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(dir.resolve("tls.crt").toString())
        .hasMessageContaining("tls.key", "ca.crt");
  }

  @Test
  void aDataPortWithoutCredentialsIsRefused() {
    DriverConfig config = node().withDataPort("127.0.0.1:0", dir);
    assertThatThrownBy(() -> DataPort.serve(config, null, null, RpcMetrics.NONE))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("--data-tls-dir");
  }
}

package dev.soko.driver.kubelet;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.soko.driver.testing.CsiHarness;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.InfoRequest;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.PluginInfo;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.RegistrationStatus;
import io.k8s.kubelet.pluginregistration.v1.RegistrationGrpc;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RegistrationServiceTest {
  private static final Path KUBELET_ENDPOINT =
      Path.of("/var/lib/kubelet/plugins/csi.soko.dev/csi.sock");

  private final Logger logger = (Logger) LoggerFactory.getLogger(RegistrationService.class);
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final RegistrationService service =
      new RegistrationService("csi.soko.dev", KUBELET_ENDPOINT);
  private CsiHarness harness;
  private RegistrationGrpc.RegistrationBlockingStub kubelet;

  @BeforeEach
  void start() throws Exception {
    logged.start();
    logger.addAppender(logged);
    harness = new CsiHarness(service);
    kubelet = RegistrationGrpc.newBlockingStub(harness.channel());
  }

  @AfterEach
  void stop() throws Exception {
    harness.close();
    logger.detachAppender(logged);
  }

  @Test
  void getInfoNamesACsiPluginWithTheDriverNameAndTheKubeletsPathOfTheCsiSocket() {
    PluginInfo info = kubelet.getInfo(InfoRequest.getDefaultInstance());
    assertThat(info.getType()).isEqualTo("CSIPlugin");
    assertThat(info.getName()).isEqualTo("csi.soko.dev");
    assertThat(info.getEndpoint()).isEqualTo("/var/lib/kubelet/plugins/csi.soko.dev/csi.sock");
    assertThat(info.getSupportedVersionsList()).containsExactly("1.0.0");
  }

  @Test
  void theDriverIsReadyForItsNodeOnlyOnceTheKubeletRegisteredIt() {
    assertThat(service.registered().notReady())
        .hasValue("the kubelet has not registered the driver yet");
    kubelet.notifyRegistrationStatus(
        RegistrationStatus.newBuilder()
            .setPluginRegistered(false)
            .setError("version 0.9 not supported")
            .build());
    assertThat(service.registered().notReady())
        .hasValue("the kubelet refused the registration: version 0.9 not supported");
    kubelet.notifyRegistrationStatus(
        RegistrationStatus.newBuilder().setPluginRegistered(true).build());
    assertThat(service.registered().notReady()).isEmpty();
  }

  @Test
  void aSuccessfulRegistrationIsRememberedAndLoggedAtInfo() {
    assertThat(service.lastOutcome()).isEmpty();
    kubelet.notifyRegistrationStatus(
        RegistrationStatus.newBuilder().setPluginRegistered(true).build());
    RegistrationService.Outcome outcome = service.lastOutcome().orElseThrow();
    assertThat(outcome.registered()).isTrue();
    assertThat(outcome.error()).isEmpty();
    assertThat(logged.list)
        .singleElement()
        .satisfies(
            event -> {
              assertThat(event.getLevel()).isEqualTo(Level.INFO);
              assertThat(event.getFormattedMessage()).isEqualTo("registered with the kubelet");
            });
  }

  @Test
  void aRefusedRegistrationIsRememberedAndLoggedAtErrorWithTheKubeletsError() {
    kubelet.notifyRegistrationStatus(
        RegistrationStatus.newBuilder().setPluginRegistered(true).build());
    kubelet.notifyRegistrationStatus(
        RegistrationStatus.newBuilder()
            .setPluginRegistered(false)
            .setError("error updating CSINode object: forbidden")
            .build());
    RegistrationService.Outcome outcome = service.lastOutcome().orElseThrow();
    assertThat(outcome.registered()).isFalse();
    assertThat(outcome.error()).isEqualTo("error updating CSINode object: forbidden");
    ILoggingEvent refused = logged.list.get(logged.list.size() - 1);
    assertThat(refused.getLevel()).isEqualTo(Level.ERROR);
    assertThat(refused.getFormattedMessage()).isEqualTo("the kubelet refused the registration");
    assertThat(refused.getKeyValuePairs())
        .anySatisfy(
            pair -> {
              assertThat(pair.key).isEqualTo("error");
              assertThat(pair.value).isEqualTo("error updating CSINode object: forbidden");
            });
  }
}

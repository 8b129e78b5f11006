package dev.soko.driver.kubelet;

import dev.soko.driver.health.Readiness;
import io.grpc.stub.StreamObserver;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.InfoRequest;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.PluginInfo;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.RegistrationStatus;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.RegistrationStatusResponse;
import io.k8s.kubelet.pluginregistration.v1.RegistrationGrpc;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's plugin registration API ({@code pluginregistration.Registration}), what
 * node-driver-registrar serves for a CSI driver. The kubelet finds the socket in its plugin
 * registry, asks {@code GetInfo}, dials the CSI endpoint it names (NodeGetInfo), then reports the
 * outcome through {@code NotifyRegistrationStatus}. Exceptions are left to the server interceptor.
 */
public final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
  /** The kubelet's plugin type for CSI drivers (pluginregistration's {@code CSIPlugin}). */
  static final String CSI_PLUGIN = "CSIPlugin";

  /** The CSI versions the kubelet's CSI plugin handler accepts; 1.0.0 covers every CSI 1.x. */
  static final List<String> SUPPORTED_VERSIONS = List.of("1.0.0");

  private static final Logger LOG = LoggerFactory.getLogger(RegistrationService.class);

  /** What the kubelet last said about this driver's registration. */
  public record Outcome(boolean registered, String error, Instant at) {}

  private final PluginInfo info;
  private final AtomicReference<Outcome> last = new AtomicReference<>();

  /**
   * @param kubeletEndpoint the CSI socket as the kubelet sees it on the host
   */
  public RegistrationService(String driverName, Path kubeletEndpoint) {
    this.info =
        PluginInfo.newBuilder()
            .setType(CSI_PLUGIN)
            .setName(driverName)
            .setEndpoint(kubeletEndpoint.toString())
            .addAllSupportedVersions(SUPPORTED_VERSIONS)
            .build();
  }

  @Override
  public void getInfo(InfoRequest request, StreamObserver<PluginInfo> observer) {
    LOG.atDebug().addKeyValue("endpoint", info.getEndpoint()).log("kubelet asked for plugin info");
    observer.onNext(info);
    observer.onCompleted();
  }

  @Override
  public void notifyRegistrationStatus(
      RegistrationStatus status, StreamObserver<RegistrationStatusResponse> observer) {
    last.set(new Outcome(status.getPluginRegistered(), status.getError(), Instant.now()));
    if (status.getPluginRegistered()) {
      LOG.atInfo()
          .addKeyValue("driver", info.getName())
          .addKeyValue("endpoint", info.getEndpoint())
          .log("registered with the kubelet");
    } else {
      // The kubelet retries on its own: the driver keeps serving and is told again.
      LOG.atError()
          .addKeyValue("driver", info.getName())
          .addKeyValue("endpoint", info.getEndpoint())
          .addKeyValue("error", status.getError())
          .log("the kubelet refused the registration");
    }
    observer.onNext(RegistrationStatusResponse.getDefaultInstance());
    observer.onCompleted();
  }

  /**
   * Ready once the kubelet said it registered the driver; until then, or after it refused, why not.
   * The kubelet speaks once per registration, so this stays ready until the process ends.
   */
  public Readiness registered() {
    return () -> {
      Outcome outcome = last.get();
      if (outcome == null) {
        return Optional.of("the kubelet has not registered the driver yet");
      }
      return outcome.registered()
          ? Optional.empty()
          : Optional.of("the kubelet refused the registration: " + outcome.error());
    };
  }

  /** The kubelet's last word on the registration; empty until it has spoken. */
  public Optional<Outcome> lastOutcome() {
    return Optional.ofNullable(last.get());
  }
}

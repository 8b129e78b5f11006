package dev.soko.driver.health;

import dev.soko.driver.http.HttpEndpoint;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's HTTP probes, in place of the livenessprobe sidecar: 200 {@code ok} when the {@link
 * Readiness} behind the route says ready, 500 with the reason otherwise. {@code /healthz}
 * (liveness) answers what Probe answers; {@code /readyz} (readiness) also waits for the kubelet to
 * have registered the driver, so a rolling update of the node plugin moves on to the next node only
 * once the new pod serves this one's kubelet.
 */
public final class Healthz implements HttpEndpoint.Route {
  public static final String PATH = "/healthz";
  public static final String READY_PATH = "/readyz";
  private static final Logger LOG = LoggerFactory.getLogger(Healthz.class);

  private final Readiness readiness;
  private final String check;

  private Healthz(Readiness readiness, String check) {
    this.readiness = readiness;
    this.check = check;
  }

  /** {@value #PATH}: what Probe answers. */
  public static Healthz liveness(Readiness readiness) {
    return new Healthz(readiness, "liveness");
  }

  /** {@value #READY_PATH}: {@code serving}, Probe's readiness and the kubelet's registration. */
  public static Healthz readiness(Readiness serving) {
    return new Healthz(serving, "readiness");
  }

  @Override
  public HttpEndpoint.Reply answer() {
    Optional<String> notReady = readiness.notReady();
    if (notReady.isEmpty()) {
      return HttpEndpoint.Reply.text(200, "ok");
    }
    // The kubelet shows only the status code in its events; the log says why the check failed.
    LOG.atWarn().addKeyValue("reason", notReady.get()).log(check + " check: not ready");
    return HttpEndpoint.Reply.text(500, notReady.get() + "\n");
  }
}

package dev.soko.driver.health;

import dev.soko.driver.http.HttpEndpoint;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /healthz} for the kubelet's liveness probe, in place of the livenessprobe sidecar: 200
 * {@code ok} when {@link Readiness} says ready (what Probe answers), 500 with the reason otherwise.
 */
public final class Healthz implements HttpEndpoint.Route {
  public static final String PATH = "/healthz";
  private static final Logger LOG = LoggerFactory.getLogger(Healthz.class);

  private final Readiness readiness;

  public Healthz(Readiness readiness) {
    this.readiness = readiness;
  }

  @Override
  public HttpEndpoint.Reply answer() {
    Optional<String> notReady = readiness.notReady();
    if (notReady.isEmpty()) {
      return HttpEndpoint.Reply.text(200, "ok");
    }
    // The kubelet shows only the status code in its events; the log says why the check failed.
    LOG.atWarn().addKeyValue("reason", notReady.get()).log("liveness check: not ready");
    return HttpEndpoint.Reply.text(500, notReady.get() + "\n");
  }
}

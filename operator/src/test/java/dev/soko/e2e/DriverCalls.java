package dev.soko.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CSI calls every node plugin served, from its metrics endpoint (driver.metricsPort) read
 * through the API server's pod proxy: per method, how many calls and their total seconds. Two
 * readings' difference is what one round cost the driver.
 */
final class DriverCalls {
  static final int METRICS_PORT = 9810;

  private static final Pattern SERIES =
      Pattern.compile("^soko_csi_rpc_seconds_(count|sum)\\{([^}]*)} (\\S+)$");
  private static final Pattern METHOD = Pattern.compile("method=\"([A-Za-z]+)\"");

  /** Method to {count, seconds}, summed over the node plugins. */
  final Map<String, double[]> byMethod = new TreeMap<>();

  static DriverCalls read(KubernetesClient client) {
    DriverCalls calls = new DriverCalls();
    for (Pod pod :
        client
            .pods()
            .inNamespace(DefaultInstall.SYSTEM)
            .withLabel("app.kubernetes.io/component", "node")
            .list()
            .getItems()) {
      String text =
          client.raw(
              "/api/v1/namespaces/%s/pods/%s:%d/proxy/metrics"
                  .formatted(DefaultInstall.SYSTEM, pod.getMetadata().getName(), METRICS_PORT));
      text.lines().forEach(calls::add);
    }
    return calls;
  }

  private void add(String line) {
    Matcher m = SERIES.matcher(line);
    if (!m.matches()) {
      return;
    }
    Matcher method = METHOD.matcher(m.group(2));
    if (!method.find()) {
      return;
    }
    double[] entry = byMethod.computeIfAbsent(method.group(1), k -> new double[2]);
    entry["count".equals(m.group(1)) ? 0 : 1] += Double.parseDouble(m.group(3));
  }

  /** "Method: n calls, mean ms" for each method called between {@code before} and this reading. */
  String since(DriverCalls before) {
    StringBuilder out = new StringBuilder();
    byMethod.forEach(
        (method, now) -> {
          double[] then = before.byMethod.getOrDefault(method, new double[2]);
          double count = now[0] - then[0];
          if (count >= 1) {
            out.append(out.isEmpty() ? "" : "; ")
                .append(
                    "%s %d × %.0f ms"
                        .formatted(method, (long) count, (now[1] - then[1]) / count * 1000));
          }
        });
    return out.toString();
  }
}

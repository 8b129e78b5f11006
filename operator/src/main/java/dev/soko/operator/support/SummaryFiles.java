package dev.soko.operator.support;

import dev.soko.operator.support.SupportBundle.Summary;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The two files that say what a support bundle holds: {@code summary.txt} for a person and {@code
 * manifest.json} for a tool, from the same counts and failures.
 */
final class SummaryFiles {
  private SummaryFiles() {}

  static String summaryText(Summary s, Duration since, Map<String, Integer> counts) {
    StringBuilder b = new StringBuilder();
    b.append("Soko support bundle\n");
    b.append("time: ").append(s.time()).append('\n');
    b.append("cluster: ").append(s.server()).append('\n');
    b.append("kubernetes: ").append(s.kubernetesVersion()).append('\n');
    b.append("operator: ").append(s.operatorVersion()).append('\n');
    b.append("logs since: ").append(since).append('\n');
    b.append("\ncollected:\n");
    counts.forEach(
        (k, v) -> b.append("  ").append(k).append(k.startsWith("(") ? "" : ": " + v).append('\n'));
    b.append(s.failures().isEmpty() ? "\nfailed: nothing\n" : "\nfailed:\n");
    s.failures().forEach(f -> b.append("  ").append(f).append('\n'));
    return b.toString();
  }

  static String manifest(Summary s, Duration since, Map<String, Integer> counts) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("time", s.time().toString());
    m.put("server", s.server());
    m.put("kubernetesVersion", s.kubernetesVersion());
    m.put("operatorVersion", s.operatorVersion());
    m.put("logsSince", since.toString());
    m.put("counts", counts);
    m.put("entries", s.entries());
    m.put("failures", s.failures());
    return Serialization.asJson(m) + "\n";
  }
}

package dev.soko.operator.monitoring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shipped monitoring sources, read from the chart (the same files its templates include): the
 * alert rules and the Grafana dashboard, with the PromQL each holds.
 */
public final class MonitoringFiles {
  public static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  public static final Path DIR = REPO.resolve("helm/soko/files/monitoring");
  public static final Path RULES = DIR.resolve("alerts.yaml");
  public static final Path DASHBOARD = DIR.resolve("dashboard.json");
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  static final ObjectMapper JSON = new ObjectMapper();

  /** Metric names in PromQL: identifiers of the families Soko and its operator export. */
  private static final Pattern METRIC = Pattern.compile("\\b(soko_[a-z_]+|operator_sdk_[a-z_]+)");

  private MonitoringFiles() {}

  /** Alert name to expression, in file order. */
  public static Map<String, String> alerts() throws IOException {
    Map<String, String> alerts = new LinkedHashMap<>();
    for (JsonNode group : YAML.readTree(RULES.toFile()).path("groups")) {
      for (JsonNode rule : group.path("rules")) {
        alerts.put(rule.path("alert").asText(), rule.path("expr").asText());
      }
    }
    return alerts;
  }

  /** "panel title / refId" to expression, for every target of every panel. */
  public static Map<String, String> dashboardQueries() throws IOException {
    Map<String, String> queries = new LinkedHashMap<>();
    for (JsonNode panel : JSON.readTree(DASHBOARD.toFile()).path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        queries.put(
            panel.path("title").asText() + " / " + target.path("refId").asText(),
            target.path("expr").asText());
      }
    }
    return queries;
  }

  /** The dashboard's template variables' queries, e.g. {@code label_values(soko_..., node)}. */
  public static List<String> variableQueries() throws IOException {
    List<String> queries = new ArrayList<>();
    for (JsonNode variable : JSON.readTree(DASHBOARD.toFile()).path("templating").path("list")) {
      if ("query".equals(variable.path("type").asText())) {
        JsonNode query = variable.path("query");
        queries.add(query.isObject() ? query.path("query").asText() : query.asText());
      }
    }
    return queries;
  }

  public static TreeSet<String> metricNames(String promql) {
    TreeSet<String> names = new TreeSet<>();
    Matcher m = METRIC.matcher(promql);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  public static String read(Path file) throws IOException {
    return Files.readString(file);
  }
}

package dev.soko.operator.model;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A Kubernetes server version such as v1.34.2; only major and minor choose images. */
public record KubernetesVersion(int major, int minor, String gitVersion) {
  private static final Pattern VERSION = Pattern.compile("^v?(\\d+)\\.(\\d+)(\\.\\d+)?.*$");

  /** Parses "1.34", "v1.34.2" or "v1.34.2-gke.100". */
  public static KubernetesVersion parse(String text) {
    Matcher m = VERSION.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "not a Kubernetes version: '" + text + "' (expected e.g. 1.34 or v1.34.2)");
    }
    String git = text.trim().startsWith("v") ? text.trim() : "v" + text.trim();
    return new KubernetesVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), git);
  }

  /** "1.34", the key of the versions table. */
  public String minorVersion() {
    return major + "." + minor;
  }
}

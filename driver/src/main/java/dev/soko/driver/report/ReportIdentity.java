package dev.soko.driver.report;

import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which installation and node a StorageNode describes. Two StorageClusters (two driver names) may
 * run node plugins on one node, so the report is named after both, {@code <storagecluster>.<node>},
 * and labelled with both: the operator selects its own reports by the StorageCluster label. Each
 * part is at most 63 characters (the StorageCluster's name rule; --node-id is a label value), so
 * the name is at most 127 and each part fits a label value as it is.
 *
 * @param storageCluster the StorageCluster's name, from {@code SOKO_STORAGE_CLUSTER}, which the
 *     operator sets on the node plugin
 */
public record ReportIdentity(String storageCluster, String node) {
  public static final String ENV = "SOKO_STORAGE_CLUSTER";
  static final String LABEL_CLUSTER = "soko.dev/storagecluster";
  static final String LABEL_NODE = "soko.dev/node";

  /** A DNS-1123 subdomain: what both parts must be for the name to be a valid object name. */
  private static final Pattern SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  public ReportIdentity {
    for (String part : new String[] {storageCluster, node}) {
      if (part == null || part.length() > 63 || !SUBDOMAIN.matcher(part).matches()) {
        throw new IllegalArgumentException(
            "'"
                + part
                + "' cannot name a StorageNode: at most 63 lower-case letters, digits, '-' and"
                + " '.', alphanumeric at both ends");
      }
    }
  }

  /**
   * The identity from {@value #ENV}; empty when it is unset (the driver was not started by the
   * operator, so no operator reads a report). Throws when it is set but cannot name a report.
   */
  public static Optional<ReportIdentity> fromEnvironment(Map<String, String> env, String node) {
    String cluster = env.get(ENV);
    return cluster == null || cluster.isEmpty()
        ? Optional.empty()
        : Optional.of(new ReportIdentity(cluster, node));
  }

  /** The StorageNode's name. */
  public String name() {
    return storageCluster + "." + node;
  }
}

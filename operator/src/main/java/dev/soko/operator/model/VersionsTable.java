package dev.soko.operator.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The versions table (resource {@code versions.yaml}): Kubernetes minor → sidecar images, as
 * repository paths without a registry host, plus the operator's default registry for them.
 */
public final class VersionsTable {
  public static final String RESOURCE = "/versions.yaml";

  private final String driverImage;
  private final List<Row> rows;
  private final String defaultRegistry;

  /**
   * The csi-snapshotter gate of the volume group snapshot API (external-snapshotter
   * pkg/features/features.go).
   */
  public static final String GROUP_SNAPSHOT_GATE = "CSIVolumeGroupSnapshot";

  /**
   * One row: images for clusters of at least 1.{@code minMinor}, the APIs they need, and the
   * feature gates the render sets on each of the row's sidecars (by image key) because that
   * release's default is not what Soko needs.
   *
   * @param sidecarApis per sidecar (image key), the APIs that one sidecar needs beyond the row's
   *     {@code requiredApis}: without them that sidecar alone does not run (add-on CRDs such as
   *     cbt.storage.k8s.io's)
   * @param groupSnapshots whether the row's csi-snapshotter serves the v1 group snapshot API behind
   *     {@value #GROUP_SNAPSHOT_GATE}: then the controller pod runs one more of it for the groups
   *     ({@link #groupSnapshotterGateArgs}) where the cluster serves that API
   */
  public record Row(
      int minMinor,
      Map<String, String> images,
      List<String> requiredApis,
      Map<String, Map<String, Boolean>> featureGates,
      boolean groupSnapshots,
      Map<String, List<String>> sidecarApis) {
    public Row {
      sidecarApis =
          sidecarApis == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(sidecarApis));
      requiredApis = requiredApis == null ? List.of() : List.copyOf(requiredApis);
      featureGates =
          featureGates == null
              ? Map.of()
              : Collections.unmodifiableMap(new TreeMap<>(featureGates));
    }

    public Row(
        int minMinor,
        Map<String, String> images,
        List<String> requiredApis,
        Map<String, Map<String, Boolean>> featureGates,
        boolean groupSnapshots) {
      this(minMinor, images, requiredApis, featureGates, groupSnapshots, null);
    }

    /** The APIs one sidecar needs beyond the row's; empty when none. */
    public List<String> apisOf(Component c) {
      return sidecarApis.getOrDefault(c.key(), List.of());
    }

    /**
     * The sidecar's {@code --feature-gates=A=true,B=false} (gates sorted by name), or none when the
     * row sets no gate on it.
     */
    public List<String> featureGateArgs(Component c) {
      return gateArgs(featureGates.getOrDefault(c.key(), Map.of()));
    }

    /**
     * The group snapshotter's gates: the row's snapshotter gates with {@value #GROUP_SNAPSHOT_GATE}
     * on, whatever the row sets for the nodes' snapshotters.
     */
    public List<String> groupSnapshotterGateArgs() {
      Map<String, Boolean> gates =
          new TreeMap<>(featureGates.getOrDefault(Component.SNAPSHOTTER.key(), Map.of()));
      gates.put(GROUP_SNAPSHOT_GATE, true);
      return gateArgs(gates);
    }

    private static List<String> gateArgs(Map<String, Boolean> gates) {
      if (gates.isEmpty()) {
        return List.of();
      }
      return List.of(
          "--feature-gates="
              + new TreeMap<>(gates)
                  .entrySet().stream()
                      .map(e -> e.getKey() + "=" + e.getValue())
                      .collect(Collectors.joining(",")));
    }
  }

  @JsonIgnoreProperties(ignoreUnknown = true)
  private record Document(String driver, List<Row> rows) {}

  VersionsTable(String driverImage, List<Row> rows) {
    this(driverImage, rows, null);
  }

  private VersionsTable(String driverImage, List<Row> rows, String defaultRegistry) {
    if (rows == null || rows.isEmpty()) {
      throw new IllegalArgumentException("versions table has no rows");
    }
    requireRepositoryPath(driverImage);
    rows.forEach(r -> r.images().values().forEach(VersionsTable::requireRepositoryPath));
    rows.forEach(VersionsTable::requireGatesOfItsOwnSidecars);
    rows.forEach(VersionsTable::requireGroupSnapshotsOnASnapshotter);
    rows.forEach(VersionsTable::requireApisOfItsOwnSidecars);
    this.driverImage = driverImage;
    this.rows = rows.stream().sorted(Comparator.comparingInt(Row::minMinor).reversed()).toList();
    this.defaultRegistry =
        defaultRegistry == null || defaultRegistry.isBlank()
            ? null
            : ResolvedImages.trimRegistry(defaultRegistry);
  }

  /**
   * The same table whose images are pulled from {@code registry} (host and optional path prefix)
   * unless a StorageCluster names its own; null or blank: no default, images stay unqualified.
   */
  public VersionsTable withDefaultRegistry(String registry) {
    return new VersionsTable(driverImage, rows, registry);
  }

  /** The operator's default registry, or null. */
  public String defaultRegistry() {
    return defaultRegistry;
  }

  /**
   * The table names no registry host: where images come from is the cluster admin's choice, so a
   * host in the table would silently pull from a place nobody chose.
   */
  private static void requireRepositoryPath(String image) {
    if (image == null || image.isBlank()) {
      throw new IllegalArgumentException("versions table has an empty image");
    }
    if (ResolvedImages.hasRegistryHost(image)) {
      throw new IllegalArgumentException(
          "versions table image " + image + " names a registry host; use a repository path");
    }
  }

  /** Feature gates are set on a sidecar the row names, and every gate has a value. */
  private static void requireGatesOfItsOwnSidecars(Row row) {
    row.featureGates()
        .forEach(
            (sidecar, gates) -> {
              if (!row.images().containsKey(sidecar) || gates == null || gates.isEmpty()) {
                throw new IllegalArgumentException(
                    "versions table row 1."
                        + row.minMinor()
                        + " sets feature gates on "
                        + sidecar
                        + ", which it has no image for or no gates");
              }
              gates.forEach(
                  (gate, value) -> {
                    if (value == null) {
                      throw new IllegalArgumentException(
                          "versions table row 1."
                              + row.minMinor()
                              + ": gate "
                              + gate
                              + " has no value");
                    }
                  });
            });
  }

  /** A sidecar's own APIs are those of a sidecar the row names. */
  private static void requireApisOfItsOwnSidecars(Row row) {
    row.sidecarApis().keySet().stream()
        .filter(sidecar -> !row.images().containsKey(sidecar))
        .findFirst()
        .ifPresent(
            sidecar -> {
              throw new IllegalArgumentException(
                  "versions table row 1."
                      + row.minMinor()
                      + " names APIs of "
                      + sidecar
                      + ", which it has no image for");
            });
  }

  /** A row whose snapshotter serves groups has a snapshotter. */
  private static void requireGroupSnapshotsOnASnapshotter(Row row) {
    if (row.groupSnapshots() && !row.images().containsKey(Component.SNAPSHOTTER.key())) {
      throw new IllegalArgumentException(
          "versions table row 1."
              + row.minMinor()
              + " serves group snapshots without a snapshotter");
    }
  }

  /** Loads the table shipped in the operator jar. */
  public static VersionsTable load() {
    try (InputStream in = VersionsTable.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing classpath resource " + RESOURCE);
      }
      Document doc = Serialization.unmarshal(in, Document.class);
      return new VersionsTable(doc.driver(), doc.rows());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The rows, newest first. */
  public List<Row> rows() {
    return rows;
  }

  public String driverImage() {
    return driverImage;
  }

  /**
   * The release this operator belongs to: the tag of its driver image, which the build sets to the
   * project's version ({@code driver: soko-driver:@project.version@} in the table).
   */
  public String release() {
    return driverImage.substring(driverImage.lastIndexOf(':') + 1);
  }

  /** The newest row whose minimum is not above the version; else the oldest row. */
  public Row rowFor(KubernetesVersion version) {
    return rows.stream()
        .filter(r -> version.major() > 1 || r.minMinor() <= version.minor())
        .findFirst()
        .orElse(rows.get(rows.size() - 1));
  }

  /** Whether the version is at least the oldest row's minimum. */
  public boolean supports(KubernetesVersion version) {
    return version.major() > 1 || version.minor() >= rows.get(rows.size() - 1).minMinor();
  }

  public int oldestSupportedMinor() {
    return rows.get(rows.size() - 1).minMinor();
  }
}

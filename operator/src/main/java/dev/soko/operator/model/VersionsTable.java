package dev.soko.operator.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** The versions table (resource {@code versions.yaml}): Kubernetes minor → sidecar images. */
public final class VersionsTable {
  public static final String RESOURCE = "/versions.yaml";

  private final String driverImage;
  private final List<Row> rows;

  /** One row: images for clusters of at least 1.{@code minMinor}, and the APIs they need. */
  public record Row(int minMinor, Map<String, String> images, List<String> requiredApis) {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  private record Document(String driver, List<Row> rows) {}

  VersionsTable(String driverImage, List<Row> rows) {
    if (rows == null || rows.isEmpty()) {
      throw new IllegalArgumentException("versions table has no rows");
    }
    this.driverImage = driverImage;
    this.rows = rows.stream().sorted(Comparator.comparingInt(Row::minMinor).reversed()).toList();
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

  public String driverImage() {
    return driverImage;
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

package dev.soko.operator.model;

import dev.soko.api.v1alpha1.ImageOverrides;
import dev.soko.api.v1alpha1.ImagesSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The image of every component for one StorageCluster and Kubernetes version: the table's row, then
 * the registry rewrite, then explicit overrides (which are kept verbatim).
 */
public final class ResolvedImages {
  private final Map<Component, String> images;

  private ResolvedImages(Map<Component, String> images) {
    this.images = Collections.unmodifiableMap(images);
  }

  public static ResolvedImages resolve(
      StorageClusterSpec spec, VersionsTable table, KubernetesVersion version) {
    VersionsTable.Row row = table.rowFor(version);
    ImagesSpec imagesSpec = spec.getImages() == null ? new ImagesSpec() : spec.getImages();
    String registry = imagesSpec.getRegistry();
    Map<Component, String> result = new EnumMap<>(Component.class);
    for (Component c : Component.values()) {
      String fromTable = c == Component.DRIVER ? table.driverImage() : row.images().get(c.key());
      if (fromTable == null) {
        throw new IllegalStateException("versions table row has no image for " + c.key());
      }
      result.put(c, rewriteRegistry(fromTable, registry));
    }
    if (spec.getDriver() != null && spec.getDriver().getImage() != null) {
      result.put(Component.DRIVER, spec.getDriver().getImage());
    }
    ImageOverrides o = imagesSpec.getOverrides();
    if (o != null) {
      putIfSet(result, Component.PROVISIONER, o.getProvisioner());
      putIfSet(result, Component.RESIZER, o.getResizer());
      putIfSet(result, Component.SNAPSHOTTER, o.getSnapshotter());
      putIfSet(result, Component.REGISTRAR, o.getRegistrar());
      putIfSet(result, Component.LIVENESS_PROBE, o.getLivenessProbe());
      putIfSet(result, Component.HEALTH_MONITOR, o.getHealthMonitor());
    }
    return new ResolvedImages(result);
  }

  /**
   * Replaces the registry host of an image with {@code registry}: "registry.k8s.io/a/b:v1" with
   * "mirror:5000/x" becomes "mirror:5000/x/a/b:v1". The first path segment is a host when it
   * contains '.' or ':' or is "localhost" (the rule container runtimes use).
   */
  static String rewriteRegistry(String image, String registry) {
    if (registry == null || registry.isBlank()) {
      return image;
    }
    int slash = image.indexOf('/');
    String repository = image;
    if (slash > 0) {
      String first = image.substring(0, slash);
      if (first.contains(".") || first.contains(":") || first.equals("localhost")) {
        repository = image.substring(slash + 1);
      }
    }
    return registry + "/" + repository;
  }

  private static void putIfSet(Map<Component, String> map, Component c, String value) {
    if (value != null && !value.isBlank()) {
      map.put(c, value);
    }
  }

  public String get(Component component) {
    return images.get(component);
  }

  /** Container name → image, sorted, for status. */
  public Map<String, String> byContainerName() {
    Map<String, String> out = new TreeMap<>();
    images.forEach((c, image) -> out.put(c.key(), image));
    return out;
  }
}

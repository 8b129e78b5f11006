package dev.soko.operator.model;

import dev.soko.api.v1alpha1.ImageOverrides;
import dev.soko.api.v1alpha1.ImagesSpec;
import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The image of every component one StorageCluster deploys, for one Kubernetes version: the table's
 * row (repository paths), qualified with the StorageCluster's registry or else the operator's
 * default, then explicit overrides and {@code driver.image} (which are kept verbatim). With
 * driver.registration BuiltIn there is no node-driver-registrar or livenessprobe image: none is
 * resolved, required from the table or reported.
 */
public final class ResolvedImages {
  private final Map<Component, String> images;
  private final String registry;

  private ResolvedImages(Map<Component, String> images, String registry) {
    this.images = Collections.unmodifiableMap(images);
    this.registry = registry;
  }

  public static ResolvedImages resolve(
      StorageClusterSpec spec, VersionsTable table, KubernetesVersion version) {
    VersionsTable.Row row = table.rowFor(version);
    ImagesSpec imagesSpec = spec.getImages() == null ? new ImagesSpec() : spec.getImages();
    String registry =
        imagesSpec.getRegistry() != null && !imagesSpec.getRegistry().isBlank()
            ? trimRegistry(imagesSpec.getRegistry())
            : table.defaultRegistry();
    Registration mode = KubeletRegistration.of(spec);
    Map<Component, String> result = new EnumMap<>(Component.class);
    for (Component c : Component.values()) {
      if (!KubeletRegistration.deploys(mode, c)) {
        continue;
      }
      String fromTable = c == Component.DRIVER ? table.driverImage() : row.images().get(c.key());
      if (fromTable == null && c == Component.SNAPSHOT_METADATA) {
        continue; // a row of a Kubernetes that does not serve its API
      }
      if (fromTable == null) {
        throw new IllegalStateException("versions table row has no image for " + c.key());
      }
      result.put(c, qualify(fromTable, registry));
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
    return new ResolvedImages(result, registry);
  }

  /** "mirror.example:5000/k8s" + "sig-storage/csi-resizer:v1" → "mirror.example:5000/k8s/..." */
  static String qualify(String repositoryPath, String registry) {
    return registry == null ? repositoryPath : registry + "/" + repositoryPath;
  }

  static String trimRegistry(String registry) {
    String r = registry.strip();
    while (r.endsWith("/")) {
      r = r.substring(0, r.length() - 1);
    }
    return r;
  }

  /**
   * Whether the first path segment is a registry host: it contains '.' or ':' or is "localhost"
   * (the rule container runtimes apply).
   */
  static boolean hasRegistryHost(String image) {
    int slash = image.indexOf('/');
    if (slash <= 0) {
      return false;
    }
    String first = image.substring(0, slash);
    return first.contains(".") || first.contains(":") || first.equals("localhost");
  }

  /** Overrides an image the StorageCluster deploys; an override of one it does not is unused. */
  private static void putIfSet(Map<Component, String> map, Component c, String value) {
    if (map.containsKey(c) && value != null && !value.isBlank()) {
      map.put(c, value);
    }
  }

  /** The component's image; null when the StorageCluster does not deploy it. */
  public String get(Component component) {
    return images.get(component);
  }

  /**
   * The registry the table's images are pulled from (the StorageCluster's, else the operator's
   * default); null when neither is set and the images are unqualified.
   */
  public String registry() {
    return registry;
  }

  /** Container name → image, sorted, for status. */
  public Map<String, String> byContainerName() {
    Map<String, String> out = new TreeMap<>();
    images.forEach((c, image) -> out.put(c.key(), image));
    return out;
  }
}

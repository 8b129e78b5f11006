package dev.soko.driver.csi;

import dev.soko.driver.volume.StorageException;
import java.util.Map;
import java.util.TreeMap;

/**
 * StorageClass parameters the driver understands: {@code pool} and {@code fsType}. Keys under
 * {@code csi.storage.k8s.io/} are added by the external-provisioner (PVC/PV names with
 * --extra-create-metadata) and are accepted but ignored; any other key is a typo or a parameter of
 * another driver, refused so that the admin learns about it at the first PVC instead of never.
 */
public record Parameters(String pool, String fsType, Map<String, String> recognised) {
  public static final String POOL = "pool";
  public static final String FS_TYPE = "fsType";
  static final String PROVISIONER_PREFIX = "csi.storage.k8s.io/";

  public static Parameters parse(Map<String, String> parameters) {
    Requests.checkMap(parameters, "parameters");
    Map<String, String> recognised = new TreeMap<>();
    for (Map.Entry<String, String> entry : parameters.entrySet()) {
      String key = entry.getKey();
      if (key.equals(POOL) || key.equals(FS_TYPE)) {
        recognised.put(key, entry.getValue());
      } else if (!key.startsWith(PROVISIONER_PREFIX)) {
        throw StorageException.invalid(
            "unknown parameter %s: this driver accepts only '%s' and '%s'",
            Capabilities.shorten(key), POOL, FS_TYPE);
      }
    }
    String pool = recognised.getOrDefault(POOL, "");
    if (recognised.containsKey(POOL)) {
      Requests.requireId(pool, "parameter " + POOL);
    }
    String fsType = recognised.getOrDefault(FS_TYPE, "");
    if (recognised.containsKey(FS_TYPE) && !Capabilities.FS_TYPES.contains(fsType)) {
      throw StorageException.invalid(
          "parameter %s=%s is not one of %s",
          FS_TYPE, Capabilities.shorten(fsType), Capabilities.FS_TYPES);
    }
    return new Parameters(pool, fsType, Map.copyOf(recognised));
  }

  /** Snapshot parameters: nothing of our own, only the provisioner's metadata keys. */
  static void checkSnapshotParameters(Map<String, String> parameters) {
    Requests.checkMap(parameters, "parameters");
    for (String key : parameters.keySet()) {
      if (!key.startsWith(PROVISIONER_PREFIX)) {
        throw StorageException.invalid(
            "unknown snapshot parameter %s: snapshots take no parameters",
            Capabilities.shorten(key));
      }
    }
  }
}

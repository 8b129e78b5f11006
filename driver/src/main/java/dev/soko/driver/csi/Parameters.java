package dev.soko.driver.csi;

import dev.soko.driver.volume.StorageException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * StorageClass parameters the driver understands: {@code pool}, {@code fsType} and the keys of the
 * per-volume attributes given in a StorageClass (which the engine checks). Keys under {@code
 * csi.storage.k8s.io/} are added by the external-provisioner (PVC/PV names with
 * --extra-create-metadata) and are accepted but ignored; any other key is a typo or a parameter of
 * another driver, refused so that the admin learns about it at the first PVC instead of never.
 */
public record Parameters(String pool, String fsType, Map<String, String> recognised) {
  public static final String POOL = "pool";
  public static final String FS_TYPE = "fsType";
  static final String PROVISIONER_PREFIX = "csi.storage.k8s.io/";

  /** Parameters of a driver whose per-volume attributes take no StorageClass parameter. */
  public static Parameters parse(Map<String, String> parameters) {
    return parse(parameters, List.of());
  }

  /**
   * @param attributeKeys the StorageClass parameters that per-volume attributes own (the engine's
   *     {@code VolumeManager.attributeParameters}), passed on for the engine to check
   */
  public static Parameters parse(Map<String, String> parameters, List<String> attributeKeys) {
    Requests.checkMap(parameters, "parameters");
    Map<String, String> recognised = new TreeMap<>();
    for (Map.Entry<String, String> entry : parameters.entrySet()) {
      String key = entry.getKey();
      if (key.equals(POOL) || key.equals(FS_TYPE) || attributeKeys.contains(key)) {
        recognised.put(key, entry.getValue());
      } else if (!key.startsWith(PROVISIONER_PREFIX)) {
        throw StorageException.invalid(
            "unknown parameter %s: this driver accepts only %s",
            Capabilities.shorten(key), accepted(attributeKeys));
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

  /** "'pool' and 'fsType'", or with the attributes' keys: "'pool', 'fsType' and 'colour'". */
  private static String accepted(List<String> attributeKeys) {
    List<String> keys = new ArrayList<>(List.of(POOL, FS_TYPE));
    keys.addAll(attributeKeys);
    List<String> quoted = keys.stream().map(k -> "'" + k + "'").toList();
    return String.join(", ", quoted.subList(0, quoted.size() - 1))
        + " and "
        + quoted.get(quoted.size() - 1);
  }

  /**
   * A group snapshot class's parameter that is not one: Kubernetes' storage suite copies the
   * class's deletion policy into its parameters, and csi-snapshotter passes them on. The deletion
   * policy is the class's own field, which the driver never sees otherwise; accepted and ignored.
   */
  static final String GROUP_DELETION_POLICY = "deletionPolicy";

  /** Snapshot parameters: nothing of our own, only the provisioner's metadata keys. */
  static void checkSnapshotParameters(Map<String, String> parameters) {
    checkSnapshotParameters(parameters, Set.of());
  }

  /** Group snapshot parameters: as a snapshot's, and {@link #GROUP_DELETION_POLICY}. */
  static void checkGroupSnapshotParameters(Map<String, String> parameters) {
    checkSnapshotParameters(parameters, Set.of(GROUP_DELETION_POLICY));
  }

  private static void checkSnapshotParameters(Map<String, String> parameters, Set<String> ignored) {
    Requests.checkMap(parameters, "parameters");
    for (String key : parameters.keySet()) {
      if (!key.startsWith(PROVISIONER_PREFIX) && !ignored.contains(key)) {
        throw StorageException.invalid(
            "unknown snapshot parameter %s: snapshots take no parameters",
            Capabilities.shorten(key));
      }
    }
  }
}

package dev.soko.driver.report;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import java.util.Map;

/**
 * What {@link ImportedSnapshots} reads of a VolumeSnapshotContent: its name and version, the CSI
 * driver it names, the snapshot handle of a pre-provisioned content ({@code
 * spec.source.snapshotHandle}; empty for a dynamic one, whose source is a volume handle) and the
 * node its managed-by label names (null when there is no such label; a label with an empty value is
 * a label all the same: csi-snapshotter's selector and ours both see the key).
 */
record SnapshotContent(
    String name, String resourceVersion, String driver, String snapshotHandle, String managedBy) {

  /** The label csi-snapshotter's node deployment selects its contents by (utils.go, v8). */
  static final String MANAGED_BY = "snapshot.storage.kubernetes.io/managed-by";

  /** The content in a list item or watch event object; null when it has no name. */
  static SnapshotContent of(Object object) {
    if (!(JsonParser.at(object, "metadata", "name") instanceof String name) || name.isEmpty()) {
      return null;
    }
    return new SnapshotContent(
        name,
        text(JsonParser.at(object, "metadata", "resourceVersion")),
        text(JsonParser.at(object, "spec", "driver")),
        text(JsonParser.at(object, "spec", "source", "snapshotHandle")),
        JsonParser.at(object, "metadata", "labels") instanceof Map<?, ?> labels
                && labels.containsKey(MANAGED_BY)
            ? text(labels.get(MANAGED_BY))
            : null);
  }

  /**
   * Whether a node should look at it: a pre-provisioned content of {@code ourDriver} that no node
   * has taken. A labelled content is never touched, whoever labelled it.
   */
  boolean unclaimedImportOf(String ourDriver) {
    return ourDriver.equals(driver)
        && !snapshotHandle.isEmpty()
        && managedBy == null
        && !resourceVersion.isEmpty();
  }

  /**
   * A JSON merge patch that labels the content with {@code node}, carrying the version it was read
   * at: the API server refuses it (409) when the content changed since, so a label another writer
   * set in the meantime is never overwritten.
   */
  String labelPatch(String node) {
    return Json.write(
        Map.of(
            "metadata",
            Json.object("resourceVersion", resourceVersion, "labels", Map.of(MANAGED_BY, node))));
  }

  private static String text(Object value) {
    return value instanceof String s ? s : "";
  }
}

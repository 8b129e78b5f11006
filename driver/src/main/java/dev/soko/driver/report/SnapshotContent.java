package dev.soko.driver.report;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import java.util.Map;
import java.util.function.Function;

/**
 * What a {@link ContentLabeller} reads of a snapshot content (a VolumeSnapshotContent or a
 * VolumeGroupSnapshotContent): its name and version, the CSI driver it names, the ID a node must
 * hold to serve it (read by the labeller for its kind of content; empty when no node is to claim
 * it) and the node its managed-by label names (null when there is no such label; a label with an
 * empty value is a label all the same: csi-snapshotter's selector and ours both see the key).
 */
record SnapshotContent(
    String name, String resourceVersion, String driver, String heldId, String managedBy) {

  /** The label csi-snapshotter's node deployment selects its contents by (utils.go, v8). */
  static final String MANAGED_BY = "snapshot.storage.kubernetes.io/managed-by";

  /**
   * The content in a list item or watch event object, its driver read by {@code driver} and its
   * held ID by {@code heldId}; null when it has no name.
   */
  static SnapshotContent of(
      Object object, Function<Object, String> driver, Function<Object, String> heldId) {
    if (!(JsonParser.at(object, "metadata", "name") instanceof String name) || name.isEmpty()) {
      return null;
    }
    return new SnapshotContent(
        name,
        text(JsonParser.at(object, "metadata", "resourceVersion")),
        driver.apply(object),
        heldId.apply(object),
        JsonParser.at(object, "metadata", "labels") instanceof Map<?, ?> labels
                && labels.containsKey(MANAGED_BY)
            ? text(labels.get(MANAGED_BY))
            : null);
  }

  /**
   * Whether a node should look at it: a content of {@code ourDriver} that names something a node
   * can hold and that no node has taken. A labelled content is never touched, whoever labelled it.
   */
  boolean unclaimedOf(String ourDriver) {
    return ourDriver.equals(driver)
        && !heldId.isEmpty()
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

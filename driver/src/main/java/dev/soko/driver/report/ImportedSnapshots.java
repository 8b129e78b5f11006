package dev.soko.driver.report;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import dev.soko.driver.state.Ids;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Hands pre-provisioned VolumeSnapshotContents to this node's csi-snapshotter ({@link
 * ContentLabeller} says how). The snapshot-controller sets the managed-by label only on the
 * contents it creates for dynamic snapshots. A content a user creates from an existing snapshot
 * handle (a re-install, a backup tool restoring its catalog, a pre-provisioned snapshot) has none,
 * nor has the content it creates for each member of a group snapshot, so no node would serve it: it
 * would never become ready, and deleting it would hang. This class labels those whose snapshot
 * ({@code spec.source.snapshotHandle}, or a group member's {@code status.snapshotHandle}) this
 * node's catalog holds; a dynamic single content is never looked at. A content whose snapshot no
 * node holds stays unlabelled (docs/snapshots.md).
 *
 * <p>Why the node and not the operator: the catalog is the one authority on where a snapshot is.
 * The operator could only learn it if every StorageNode report listed every snapshot ID (reports
 * that grow with the snapshots, rewritten every minute by every node), and would then label from a
 * report up to a minute old. The cost here is small: the watch selects only contents without the
 * label, which are the imported ones until a node labels them (a dynamic content carries the label
 * from its creation), so at 1,000 nodes an import costs 1,000 small watch events and one PATCH, and
 * a start costs one LIST that finds (nearly) nothing.
 */
public final class ImportedSnapshots extends ContentLabeller {
  static final String CONTENTS = "/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents";
  static final Kind KIND =
      new Kind(
          CONTENTS,
          "VolumeSnapshotContent",
          "a pre-provisioned VolumeSnapshotContent",
          "labelling the pre-provisioned VolumeSnapshotContents whose snapshot this node holds",
          "snapshot-import",
          false);

  /** The snapshot-controller's annotation on each member content of a group snapshot (v8). */
  static final String GROUP_MEMBER = "groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle";

  private final Predicate<String> holdsSnapshot;

  /**
   * @param driver this driver's name: only contents whose {@code spec.driver} it is are looked at
   * @param node this node's name, the label's value (csi-snapshotter's NODE_NAME)
   * @param holdsSnapshot whether this node's catalog holds a snapshot ID
   */
  public ImportedSnapshots(
      KubeApi api, String driver, String node, Predicate<String> holdsSnapshot) {
    this(api, driver, node, holdsSnapshot, Timing.DEFAULT);
  }

  ImportedSnapshots(
      KubeApi api,
      String driver,
      String node,
      Predicate<String> holdsSnapshot,
      Duration minWatch,
      Duration recheck) {
    this(
        api,
        driver,
        node,
        holdsSnapshot,
        new Timing(minWatch, recheck, Timing.DEFAULT.lookAgain()));
  }

  private ImportedSnapshots(
      KubeApi api, String driver, String node, Predicate<String> holdsSnapshot, Timing timing) {
    super(api, KIND, driver, node, timing);
    this.holdsSnapshot = holdsSnapshot;
  }

  /**
   * The snapshot handle of a pre-provisioned content, or of a group member's content once the
   * snapshot-controller has written it to the status (a member's spec names its source volume, and
   * its annotation the group), when it is a Soko snapshot ID.
   */
  @Override
  String heldId(Object content) {
    String handle = Reflector.text(JsonParser.at(content, "spec", "source", "snapshotHandle"));
    if (handle.isEmpty() && groupMember(content)) {
      handle = Reflector.text(JsonParser.at(content, "status", "snapshotHandle"));
    }
    return Ids.isSnapshotId(handle) ? handle : "";
  }

  private static boolean groupMember(Object content) {
    return JsonParser.at(content, "metadata", "annotations") instanceof Map<?, ?> annotations
        && annotations.containsKey(GROUP_MEMBER);
  }

  @Override
  boolean holds(String snapshotId) {
    return holdsSnapshot.test(snapshotId);
  }
}

package dev.soko.driver.report;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import dev.soko.driver.state.Ids;
import java.util.List;
import java.util.function.Predicate;

/**
 * Hands VolumeGroupSnapshotContents to this node's csi-snapshotter ({@link ContentLabeller} says
 * how). Its node deployment lists group contents by the same managed-by label as single ones, and
 * the snapshot-controller labels no group content, dynamic or not: without this class no node would
 * ever take a group snapshot. This class labels a group content of this driver with this node when
 *
 * <ul>
 *   <li>it is dynamic ({@code spec.source.volumeHandles}) and this node holds its first volume: one
 *       node, and only one, takes each group. A group's members must all be on one node (one pool,
 *       frozen together); when they are not, the node of the first refuses
 *       CreateVolumeGroupSnapshot with NOT_FOUND naming a volume it does not hold, which
 *       csi-snapshotter records on the content and the VolumeGroupSnapshot, where the user sees it.
 *       Claiming on any member, or on all of them, would have several nodes race for one content;
 *   <li>it is pre-provisioned ({@code spec.source.groupSnapshotHandles.volumeGroupSnapshotHandle})
 *       and this node holds that group snapshot.
 * </ul>
 *
 * <p>The member VolumeSnapshotContents the snapshot-controller then makes for a group name each
 * member's snapshot handle and carry no label: {@link ImportedSnapshots} takes them, as it takes
 * any pre-provisioned content. The group snapshot API is installed apart from the snapshot one and
 * may be missing: then this class looks for it again every few minutes, quietly.
 */
public final class GroupSnapshotContents extends ContentLabeller {
  static final String CONTENTS =
      "/apis/groupsnapshot.storage.k8s.io/v1/volumegroupsnapshotcontents";
  static final Kind KIND =
      new Kind(
          CONTENTS,
          "VolumeGroupSnapshotContent",
          "a VolumeGroupSnapshotContent",
          "labelling the VolumeGroupSnapshotContents whose first volume or whose group snapshot"
              + " this node holds",
          "group-snapshot-import",
          true);

  private final Predicate<String> holdsVolume;
  private final Predicate<String> holdsGroup;

  /**
   * @param driver this driver's name: only contents whose {@code spec.driver} it is are looked at
   * @param node this node's name, the label's value (csi-snapshotter's NODE_NAME)
   * @param holdsVolume whether this node's catalog holds a volume ID
   * @param holdsGroup whether this node's catalog holds a group snapshot ID
   */
  public GroupSnapshotContents(
      KubeApi api,
      String driver,
      String node,
      Predicate<String> holdsVolume,
      Predicate<String> holdsGroup) {
    this(api, driver, node, holdsVolume, holdsGroup, Timing.DEFAULT);
  }

  GroupSnapshotContents(
      KubeApi api,
      String driver,
      String node,
      Predicate<String> holdsVolume,
      Predicate<String> holdsGroup,
      Timing timing) {
    super(api, KIND, driver, node, timing);
    this.holdsVolume = holdsVolume;
    this.holdsGroup = holdsGroup;
  }

  /**
   * A pre-provisioned content's group snapshot handle, else a dynamic content's first volume
   * handle, when it is a Soko ID of that kind. A content naming a group handle of another form is
   * not judged by its volumes: it is not dynamic.
   */
  @Override
  String heldId(Object content) {
    Object source = JsonParser.at(content, "spec", "source");
    String group =
        Reflector.text(JsonParser.at(source, "groupSnapshotHandles", "volumeGroupSnapshotHandle"));
    if (!group.isEmpty()) {
      return Ids.isGroupId(group) ? group : "";
    }
    if (JsonParser.at(source, "volumeHandles") instanceof List<?> volumes
        && !volumes.isEmpty()
        && volumes.get(0) instanceof String first
        && Ids.isVolumeId(first)) {
      return first;
    }
    return "";
  }

  @Override
  boolean holds(String heldId) {
    return Ids.isGroupId(heldId) ? holdsGroup.test(heldId) : holdsVolume.test(heldId);
  }
}

package dev.soko.driver.report;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import java.util.List;

/**
 * Hands every VolumeGroupSnapshotContent of this driver to the controller pod's group
 * csi-snapshotter ({@link ContentLabeller} says how). That snapshotter runs with {@code
 * --node-deployment} under an identity no node has ({@code NODE_NAME}, which the operator also
 * gives this process and puts on the VolumeGroupSnapshotClass): external-snapshotter v8 reads group
 * contents and group classes only through the managed-by label selector in that mode, and the
 * snapshot-controller labels no group content. The controller-mode driver takes every group call
 * itself, through the node of a group's volumes or the nodes of a group across nodes
 * (docs/design.md, "Controller to node", "Groups across nodes"), so no node needs to claim a group;
 * the member contents the snapshot-controller makes for a group are claimed by their node ({@link
 * ImportedSnapshots}).
 *
 * <p>Every dynamic ({@code spec.source.volumeHandles}) and pre-provisioned ({@code
 * spec.source.groupSnapshotHandles}) content of this driver without the label is labelled; a
 * labelled one is never changed. The group snapshot API is installed apart from the snapshot one
 * and may be missing: then this class looks for it again every few minutes, quietly.
 */
public final class GroupSnapshotContents extends ContentLabeller {
  static final String CONTENTS =
      "/apis/groupsnapshot.storage.k8s.io/v1/volumegroupsnapshotcontents";
  static final Kind KIND =
      new Kind(
          CONTENTS,
          "VolumeGroupSnapshotContent",
          "a VolumeGroupSnapshotContent",
          "labelling this driver's VolumeGroupSnapshotContents for the controller's group"
              + " snapshotter",
          "group-snapshot-contents",
          true);

  /**
   * @param driver this driver's name: only contents whose {@code spec.driver} it is are looked at
   * @param snapshotter the group snapshotter's identity, the label's value (its NODE_NAME)
   */
  public GroupSnapshotContents(KubeApi api, String driver, String snapshotter) {
    this(api, driver, snapshotter, Timing.DEFAULT);
  }

  GroupSnapshotContents(KubeApi api, String driver, String snapshotter, Timing timing) {
    super(api, KIND, driver, snapshotter, timing);
  }

  /**
   * The content's group snapshot handle (pre-provisioned) or first volume handle (dynamic): any
   * such content is the group snapshotter's. Empty for a content that names neither.
   */
  @Override
  String heldId(Object content) {
    Object source = JsonParser.at(content, "spec", "source");
    String group =
        Reflector.text(JsonParser.at(source, "groupSnapshotHandles", "volumeGroupSnapshotHandle"));
    if (!group.isEmpty()) {
      return group;
    }
    if (JsonParser.at(source, "volumeHandles") instanceof List<?> volumes
        && !volumes.isEmpty()
        && volumes.get(0) instanceof String first) {
      return first;
    }
    return "";
  }

  /** The controller's snapshotter serves every group: the node is found per call. */
  @Override
  boolean holds(String heldId) {
    return true;
  }
}

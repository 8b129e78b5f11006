package dev.soko.driver.report;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;

/**
 * Hands every VolumeGroupSnapshotClass of this driver to the controller pod's group csi-snapshotter
 * ({@link ContentLabeller} says how), as {@link GroupSnapshotContents} hands it the contents: with
 * {@code --node-deployment}, external-snapshotter v8 reads group classes through the same
 * managed-by label selector as group contents, so a class without the label is invisible to it and
 * every group of that class fails with "volumegroupsnapshotclass not found". The operator labels
 * the class it owns; this labels those an admin or a test suite creates for this driver (the
 * class's top-level {@code driver}). A labelled class is never changed.
 */
public final class GroupSnapshotClasses extends ContentLabeller {
  static final String CLASSES = "/apis/groupsnapshot.storage.k8s.io/v1/volumegroupsnapshotclasses";
  static final Kind KIND =
      new Kind(
          CLASSES,
          "VolumeGroupSnapshotClass",
          "a VolumeGroupSnapshotClass",
          "labelling this driver's VolumeGroupSnapshotClasses for the controller's group"
              + " snapshotter",
          "group-snapshot-classes",
          true);

  /**
   * @param driver this driver's name: only classes whose {@code driver} it is are looked at
   * @param snapshotter the group snapshotter's identity, the label's value (its NODE_NAME)
   */
  public GroupSnapshotClasses(KubeApi api, String driver, String snapshotter) {
    this(api, driver, snapshotter, Timing.DEFAULT);
  }

  GroupSnapshotClasses(KubeApi api, String driver, String snapshotter, Timing timing) {
    super(api, KIND, driver, snapshotter, timing);
  }

  @Override
  String driverOf(Object object) {
    return Reflector.text(JsonParser.at(object, "driver"));
  }

  /** The class's name: every class of this driver is the group snapshotter's. */
  @Override
  String heldId(Object object) {
    return Reflector.text(JsonParser.at(object, "metadata", "name"));
  }

  @Override
  boolean holds(String heldId) {
    return true;
  }
}

package dev.soko.driver.handoff;

import java.util.List;
import java.util.Map;

/**
 * One request as the node sees it: its spec at one generation.
 *
 * @param name the object's name
 * @param generation the spec's generation, which the status acknowledges
 * @param volumeId the CSI volume id (ModifyVolume, CreateSnapshot), else empty
 * @param operation what to do, e.g. {@code ModifyVolume}
 * @param parameters the operation's parameters, whole
 * @param arguments what the snapshot operations name
 */
public record NodeRequest(
    String name,
    long generation,
    String volumeId,
    String operation,
    Map<String, String> parameters,
    Arguments arguments) {
  public NodeRequest {
    parameters = Map.copyOf(parameters);
  }

  /** A ModifyVolume request. */
  public NodeRequest(
      String name,
      long generation,
      String volumeId,
      String operation,
      Map<String, String> parameters) {
    this(name, generation, volumeId, operation, parameters, Arguments.NONE);
  }

  /**
   * What a snapshot operation names; each empty where its operation names none.
   *
   * @param csiName the CSI name of the snapshot or group snapshot to create
   * @param volumeIds a group's source volumes, in order
   * @param groupSnapshotId the group snapshot to describe or delete
   * @param snapshotIds a group's members, or the snapshot to delete
   */
  public record Arguments(
      String csiName, List<String> volumeIds, String groupSnapshotId, List<String> snapshotIds) {
    public static final Arguments NONE = new Arguments("", List.of(), "", List.of());

    public Arguments {
      volumeIds = List.copyOf(volumeIds);
      snapshotIds = List.copyOf(snapshotIds);
    }
  }
}

package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.volume.NodeGroupId;
import dev.soko.driver.volume.SnapshotOperations;
import dev.soko.driver.volume.StorageException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The controller's snapshot calls, each carried out by the node that holds the volumes through a
 * NodeRequest. They reach the controller from its group csi-snapshotter, which serves the
 * VolumeGroupSnapshotContents (single snapshots are served by each node's own csi-snapshotter; the
 * controller answers CreateSnapshot and DeleteSnapshot too, because csi-snapshotter does not start
 * for a driver without them).
 *
 * <p>Finding the node: a create names volumes, whose PersistentVolumes name their node ({@link
 * VolumeOwners}); a group's volumes must all be on the first one's node, which refuses the group
 * otherwise (NOT_FOUND naming the volume). The group snapshot ID the controller answers is the
 * node's ID, {@value NodeGroupId#AT} and the node's name, so Get and Delete find the node in the ID
 * alone. A snapshot ID does not name its node: the CreateSnapshot request stays (owned by the
 * source's PV, labelled {@value #OPERATION_LABEL}) and DeleteSnapshot finds it by the snapshot in
 * its status. The group requests are deleted once answered: the node's records are the state, and a
 * retried call gets the same answer from them (the same name gives the same group).
 */
public final class RemoteSnapshots implements SnapshotOperations {
  static final String CREATE_SNAPSHOT = "CreateSnapshot";
  static final String DELETE_SNAPSHOT = "DeleteSnapshot";
  static final String CREATE_GROUP = "CreateVolumeGroupSnapshot";
  static final String GET_GROUP = "GetVolumeGroupSnapshot";
  static final String DELETE_GROUP = "DeleteVolumeGroupSnapshot";
  static final String OPERATION_LABEL = "soko.dev/operation";

  private final VolumeOwners owners;
  private final NodeRequestClient client;

  public RemoteSnapshots(VolumeOwners owners, NodeRequestClient client) {
    this.owners = owners;
    this.client = client;
  }

  @Override
  public Snapshot createSnapshot(String name, String sourceVolumeId) {
    VolumeOwners.Owner owner = owners.require(sourceVolumeId);
    Object status =
        applied(
            new NodeRequestClient.Ask(
                CREATE_SNAPSHOT,
                name,
                owner.node(),
                owner,
                Json.object("volumeId", sourceVolumeId, "name", name),
                Map.of(OPERATION_LABEL, CREATE_SNAPSHOT)));
    return SnapshotAnswers.snapshot(JsonParser.at(status, SnapshotAnswers.SNAPSHOT), name, "")
        .orElseThrow(() -> incomplete(CREATE_SNAPSHOT, name));
  }

  @Override
  public void deleteSnapshot(String snapshotId) {
    Optional<Object> created = creation(snapshotId);
    if (created.isEmpty()) {
      return; // not taken through the controller, or deleted already
    }
    String node = text(JsonParser.at(created.get(), "spec", "node"));
    String name = text(JsonParser.at(created.get(), "spec", "name"));
    applied(
        new NodeRequestClient.Ask(
            DELETE_SNAPSHOT,
            snapshotId,
            node,
            null,
            Json.object("snapshotIds", List.of(snapshotId)),
            Map.of()));
    forget(DELETE_SNAPSHOT, snapshotId);
    forget(CREATE_SNAPSHOT, name);
  }

  @Override
  public GroupSnapshot createGroupSnapshot(String name, List<String> sourceVolumeIds) {
    VolumeOwners.Owner owner = owners.require(sourceVolumeIds.get(0));
    Object status =
        applied(
            new NodeRequestClient.Ask(
                CREATE_GROUP,
                name,
                owner.node(),
                owner,
                Json.object(
                    "volumeId", sourceVolumeIds.get(0), "name", name, "volumeIds", sourceVolumeIds),
                Map.of()));
    GroupSnapshot group = group(status, name, owner.node());
    forget(CREATE_GROUP, name);
    return group;
  }

  @Override
  public GroupSnapshot getGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
    NodeGroupId id = NodeGroupId.parse(groupSnapshotId);
    Object status =
        applied(
            new NodeRequestClient.Ask(
                GET_GROUP,
                groupSnapshotId,
                id.node(),
                null,
                Json.object("groupSnapshotId", id.nodeId(), "snapshotIds", snapshotIds),
                Map.of()));
    GroupSnapshot group = group(status, "", id.node());
    forget(GET_GROUP, groupSnapshotId);
    return group;
  }

  @Override
  public void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
    Optional<NodeGroupId> id = NodeGroupId.tryParse(groupSnapshotId);
    if (id.isEmpty()) {
      return; // no group was ever answered with that ID: an unknown ID succeeds
    }
    applied(
        new NodeRequestClient.Ask(
            DELETE_GROUP,
            groupSnapshotId,
            id.get().node(),
            null,
            Json.object("groupSnapshotId", id.get().nodeId(), "snapshotIds", snapshotIds),
            Map.of()));
    forget(DELETE_GROUP, groupSnapshotId);
  }

  private GroupSnapshot group(Object status, String name, String node) {
    Object answer = JsonParser.at(status, SnapshotAnswers.GROUP_SNAPSHOT);
    String nodeId = text(JsonParser.at(answer, "groupSnapshotId"));
    return SnapshotAnswers.group(answer, name, new NodeGroupId(nodeId, node).id())
        .filter(g -> !nodeId.isEmpty())
        .orElseThrow(() -> incomplete("a group snapshot", name));
  }

  /** The CreateSnapshot request whose status holds {@code snapshotId}, if there is one. */
  private Optional<Object> creation(String snapshotId) {
    List<?> requests;
    try {
      requests =
          client
              .list(OPERATION_LABEL + "=" + CREATE_SNAPSHOT)
              .orElseThrow(
                  () ->
                      new StorageException(
                          StorageException.Reason.UNAVAILABLE,
                          "the NodeRequests cannot be listed now"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(StorageException.Reason.UNAVAILABLE, "interrupted");
    }
    return requests.stream()
        .filter(
            r ->
                snapshotId.equals(
                    text(JsonParser.at(r, "status", SnapshotAnswers.SNAPSHOT, "snapshotId"))))
        .map(r -> (Object) r)
        .findFirst();
  }

  /** The node's status once it applied the request; a StorageException as the CSI call must. */
  private Object applied(NodeRequestClient.Ask ask) {
    NodeRequestClient.Answer answer;
    try {
      answer = client.ask(ask);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(StorageException.Reason.UNAVAILABLE, "interrupted");
    }
    return switch (answer.kind()) {
      case APPLIED -> answer.status();
      case REFUSED -> {
        forget(ask.operation(), ask.key());
        throw new StorageException(reason(answer.status()), answer.message());
      }
      default -> throw new StorageException(StorageException.Reason.UNAVAILABLE, answer.message());
    };
  }

  private static StorageException.Reason reason(Object status) {
    try {
      return StorageException.Reason.valueOf(text(JsonParser.at(status, NodeRequests.REASON)));
    } catch (IllegalArgumentException e) {
      return StorageException.Reason.INVALID_ARGUMENT;
    }
  }

  /** Best effort: a request left behind is answered again from the node's records. */
  private void forget(String operation, String key) {
    try {
      client.forget(operation, key);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static StorageException incomplete(String what, String name) {
    return new StorageException(
        StorageException.Reason.INTERNAL,
        "the node's answer to " + what + " " + name + " is incomplete");
  }
}

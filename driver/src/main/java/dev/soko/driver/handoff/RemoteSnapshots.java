package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.volume.NodeGroupId;
import dev.soko.driver.volume.SnapshotOperations;
import dev.soko.driver.volume.SpanningGroupId;
import dev.soko.driver.volume.StorageException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The controller's snapshot calls, each carried out by the node that holds the volumes through a
 * NodeRequest. They reach the controller from its group csi-snapshotter, which serves the
 * VolumeGroupSnapshotContents (single snapshots are served by each node's own csi-snapshotter; the
 * controller answers CreateSnapshot and DeleteSnapshot too, because csi-snapshotter does not start
 * for a driver without them).
 *
 * <p>Finding the node: a create names volumes, whose PersistentVolumes name their node ({@link
 * VolumeOwners}); a group whose volumes are on one node goes to that node, and the group snapshot
 * ID the controller answers is the node's ID, {@value NodeGroupId#AT} and the node's name, so Get
 * and Delete find the node in the ID alone. A group whose volumes are on several nodes is taken by
 * {@link AcrossNodes} (the nodes' data ports), and its ID ({@link SpanningGroupId}) names every
 * node, whose parts Get and Delete ask of each through NodeRequests; without it, such a group goes
 * to the first volume's node, which refuses it (NOT_FOUND naming the volume). A snapshot ID does
 * not name its node: the CreateSnapshot request stays (owned by the source's PV, labelled {@value
 * #OPERATION_LABEL}) and DeleteSnapshot finds it by the snapshot in its status. The group requests
 * are deleted once answered: the node's records are the state, and a retried call gets the same
 * answer from them (the same name gives the same group).
 */
public final class RemoteSnapshots implements SnapshotOperations {
  /** Takes a group whose volumes are on several nodes (the nodes' data ports). */
  @FunctionalInterface
  public interface AcrossNodes {
    /**
     * @param volumesByNode each node's members, in the request's order
     */
    GroupSnapshot take(String name, Map<String, List<String>> volumesByNode);
  }

  static final String CREATE_SNAPSHOT = "CreateSnapshot";
  static final String DELETE_SNAPSHOT = "DeleteSnapshot";
  static final String CREATE_GROUP = "CreateVolumeGroupSnapshot";
  static final String GET_GROUP = "GetVolumeGroupSnapshot";
  static final String DELETE_GROUP = "DeleteVolumeGroupSnapshot";
  static final String OPERATION_LABEL = "soko.dev/operation";

  private final VolumeOwners owners;
  private final NodeRequestClient client;
  private final Optional<AcrossNodes> acrossNodes;

  /** Groups on one node only: one across nodes goes to the first volume's node, which refuses. */
  public RemoteSnapshots(VolumeOwners owners, NodeRequestClient client) {
    this(owners, client, Optional.empty());
  }

  public RemoteSnapshots(
      VolumeOwners owners, NodeRequestClient client, Optional<AcrossNodes> acrossNodes) {
    this.owners = owners;
    this.client = client;
    this.acrossNodes = acrossNodes;
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
    Map<String, List<String>> byNode = volumesByNode(sourceVolumeIds);
    if (byNode.size() > 1 && acrossNodes.isPresent()) {
      return acrossNodes.get().take(name, byNode);
    }
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

  /**
   * The volumes by the node their PersistentVolume names, in the request's order; a volume no PV
   * names a node for stays with the first volume's node, as before, which answers for it.
   */
  private Map<String, List<String>> volumesByNode(List<String> sourceVolumeIds) {
    Map<String, List<String>> byNode = new LinkedHashMap<>();
    String first = owners.require(sourceVolumeIds.get(0)).node();
    for (String volumeId : sourceVolumeIds) {
      String node = owners.of(volumeId).map(VolumeOwners.Owner::node).orElse(first);
      byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(volumeId);
    }
    return byNode;
  }

  @Override
  public GroupSnapshot getGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
    Optional<SpanningGroupId> spanning = SpanningGroupId.tryParse(groupSnapshotId);
    if (spanning.isPresent()) {
      return getAcrossNodes(spanning.get(), snapshotIds);
    }
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
    Optional<SpanningGroupId> spanning = SpanningGroupId.tryParse(groupSnapshotId);
    if (spanning.isPresent()) {
      deleteAcrossNodes(spanning.get(), snapshotIds);
      return;
    }
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

  /**
   * A group across nodes: every node's part, asked of that node by the whole ID (each keeps its
   * part under the ID's first half). A node down or gone is UNAVAILABLE, as for a group of one
   * node.
   */
  private GroupSnapshot getAcrossNodes(SpanningGroupId id, List<String> snapshotIds) {
    List<Snapshot> members = new ArrayList<>();
    Instant created = Instant.EPOCH;
    for (String node : id.nodes()) {
      String key = partKey(id, node);
      Object status =
          applied(
              new NodeRequestClient.Ask(
                  GET_GROUP,
                  key,
                  node,
                  null,
                  Json.object("groupSnapshotId", id.id(), "snapshotIds", List.of()),
                  Map.of()));
      GroupSnapshot part = group(status, "", id);
      forget(GET_GROUP, key);
      members.addAll(part.members());
      created = part.createdAt().isAfter(created) ? part.createdAt() : created;
    }
    checkMembers(id, members, snapshotIds);
    return new GroupSnapshot(id.id(), "", members, created);
  }

  /**
   * Deletes every node's part; a node that has none succeeds, as a delete of an unknown group does.
   * The CO's list of members, when given, is checked against the parts first.
   */
  private void deleteAcrossNodes(SpanningGroupId id, List<String> snapshotIds) {
    if (!snapshotIds.isEmpty()) {
      getAcrossNodesForDelete(id, snapshotIds);
    }
    for (String node : id.nodes()) {
      removePart(node, id.id());
    }
  }

  private void getAcrossNodesForDelete(SpanningGroupId id, List<String> snapshotIds) {
    try {
      getAcrossNodes(id, snapshotIds);
    } catch (StorageException e) {
      if (e.reason() != StorageException.Reason.NOT_FOUND) {
        throw e;
      }
      // a part deleted already: the rest are deleted without the check
    }
  }

  /** Removes {@code node}'s part of group {@code groupSnapshotId} (a group across nodes). */
  public void removePart(String node, String groupSnapshotId) {
    SpanningGroupId id =
        SpanningGroupId.tryParse(groupSnapshotId)
            .orElseThrow(() -> StorageException.invalid("%s names no nodes", groupSnapshotId));
    String key = partKey(id, node);
    applied(
        new NodeRequestClient.Ask(
            DELETE_GROUP,
            key,
            node,
            null,
            Json.object("groupSnapshotId", id.id(), "snapshotIds", List.of()),
            Map.of()));
    forget(DELETE_GROUP, key);
  }

  private static String partKey(SpanningGroupId id, String node) {
    return id.partId() + "/" + node;
  }

  private static void checkMembers(
      SpanningGroupId id, List<Snapshot> members, List<String> snapshotIds) {
    Set<String> held = members.stream().map(Snapshot::id).collect(Collectors.toSet());
    if (!snapshotIds.isEmpty() && !Set.copyOf(snapshotIds).equals(held)) {
      throw StorageException.invalid(
          "snapshot IDs do not name the members of group snapshot %s, which are %s",
          id.id(), new TreeSet<>(held));
    }
  }

  private GroupSnapshot group(Object status, String name, SpanningGroupId id) {
    Object answer = JsonParser.at(status, SnapshotAnswers.GROUP_SNAPSHOT);
    return SnapshotAnswers.group(answer, name, id.id())
        .orElseThrow(() -> incomplete("a group snapshot", id.id()));
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

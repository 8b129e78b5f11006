package dev.soko.driver.handoff;

import dev.soko.driver.volume.ExpandResult;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeManager;
import java.util.function.Supplier;

/**
 * The node's handler. An ExpandVolume request grows the volume now, as far as this node can ({@link
 * VolumeManager#expandNow}, idempotent: a volume at the size grows nothing), and answers whether
 * NodeExpandVolume is still needed. A ModifyVolume request replaces the volume's mutable parameters
 * in this node's engine, which keeps them in the volume's record before it answers (so an Applied
 * request survives a restart) and applies them to the pods the volume is published to. The snapshot
 * operations are the engine's own calls, which are durable and idempotent already (the same name
 * gives the same snapshot or group, a delete of what is gone succeeds); what they answer goes to
 * the request's status. Bad arguments and what this node does not hold are refused; anything else
 * failed, and is retried.
 */
public final class LocalRequests implements NodeRequestHandler {
  private final VolumeManager volumes;

  public LocalRequests(VolumeManager volumes) {
    this.volumes = volumes;
  }

  @Override
  public Outcome handle(NodeRequest request) {
    NodeRequest.Arguments a = request.arguments();
    return switch (request.operation()) {
      case RemoteModify.OPERATION ->
          outcome(
              () -> {
                volumes.modifyVolume(request.volumeId(), request.parameters());
                return Outcome.applied();
              });
      case RemoteExpand.OPERATION -> outcome(() -> expand(request));
      case RemoteSnapshots.CREATE_SNAPSHOT ->
          outcome(
              () ->
                  Outcome.applied(
                      SnapshotAnswers.SNAPSHOT,
                      SnapshotAnswers.of(volumes.createSnapshot(a.csiName(), request.volumeId()))));
      case RemoteSnapshots.DELETE_SNAPSHOT ->
          outcome(
              () -> {
                a.snapshotIds().forEach(volumes::deleteSnapshot);
                return Outcome.applied();
              });
      case RemoteSnapshots.CREATE_GROUP ->
          outcome(
              () ->
                  Outcome.applied(
                      SnapshotAnswers.GROUP_SNAPSHOT,
                      SnapshotAnswers.of(volumes.createGroupSnapshot(a.csiName(), a.volumeIds()))));
      case RemoteSnapshots.GET_GROUP ->
          outcome(
              () ->
                  Outcome.applied(
                      SnapshotAnswers.GROUP_SNAPSHOT,
                      SnapshotAnswers.of(
                          volumes.getGroupSnapshot(a.groupSnapshotId(), a.snapshotIds()))));
      case RemoteSnapshots.DELETE_GROUP ->
          outcome(
              () -> {
                volumes.deleteGroupSnapshot(a.groupSnapshotId(), a.snapshotIds());
                return Outcome.applied();
              });
      default -> Outcome.refused("this driver does not know the operation " + request.operation());
    };
  }

  /** Grown now as far as this node can; the answer says whether NodeExpandVolume is needed. */
  private Outcome expand(NodeRequest request) {
    ExpandResult result =
        volumes.expandNow(
            request.volumeId(),
            bytes(request, RemoteExpand.REQUIRED_BYTES),
            bytes(request, RemoteExpand.LIMIT_BYTES));
    return Outcome.applied(RemoteExpand.EXPANSION, RemoteExpand.answer(result));
  }

  private static long bytes(NodeRequest request, String parameter) {
    String value = request.parameters().getOrDefault(parameter, "0");
    try {
      long bytes = Long.parseLong(value);
      if (bytes >= 0) {
        return bytes;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw StorageException.invalid("%s must be a number of bytes, not %s", parameter, value);
  }

  private static Outcome outcome(Supplier<Outcome> call) {
    try {
      return call.get();
    } catch (StorageException e) {
      return switch (e.reason()) {
        case ABORTED, UNAVAILABLE, INTERNAL -> Outcome.failed(e.getMessage());
        default -> Outcome.refused(e.reason(), e.getMessage());
      };
    }
  }
}

package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A snapshot or group snapshot as a NodeRequest's status carries it ({@code status.snapshot},
 * {@code status.groupSnapshot}; the NodeRequest CRD's schema): written by the node, read back by
 * the controller. Times are RFC 3339 with nanoseconds, so the controller answers the instant the
 * node took.
 */
final class SnapshotAnswers {
  static final String SNAPSHOT = "snapshot";
  static final String GROUP_SNAPSHOT = "groupSnapshot";

  private SnapshotAnswers() {}

  static Map<String, Object> of(Snapshot snapshot) {
    return Json.object(
        "snapshotId",
        snapshot.id(),
        "sourceVolumeId",
        snapshot.sourceVolumeId(),
        "sizeBytes",
        snapshot.sizeBytes(),
        "creationTime",
        snapshot.createdAt().toString(),
        "readyToUse",
        snapshot.readyToUse());
  }

  static Map<String, Object> of(GroupSnapshot group) {
    return Json.object(
        "groupSnapshotId",
        group.id(),
        "creationTime",
        group.createdAt().toString(),
        "readyToUse",
        group.readyToUse(),
        "snapshots",
        group.members().stream().map(SnapshotAnswers::of).toList());
  }

  /** The snapshot in {@code answer} (an object {@link #of(Snapshot)} wrote), if it is whole. */
  static Optional<Snapshot> snapshot(Object answer, String name, String groupSnapshotId) {
    String id = text(JsonParser.at(answer, "snapshotId"));
    Optional<Instant> created = instant(JsonParser.at(answer, "creationTime"));
    if (id.isEmpty()
        || created.isEmpty()
        || !(JsonParser.at(answer, "sizeBytes") instanceof Number size)) {
      return Optional.empty();
    }
    return Optional.of(
        new Snapshot(
            id,
            name,
            text(JsonParser.at(answer, "sourceVolumeId")),
            size.longValue(),
            created.get(),
            Boolean.TRUE.equals(JsonParser.at(answer, "readyToUse")),
            groupSnapshotId));
  }

  /**
   * The group in {@code answer}, its ID replaced by {@code groupSnapshotId} (the ID the controller
   * answers, which names the node), if it is whole.
   */
  static Optional<GroupSnapshot> group(Object answer, String name, String groupSnapshotId) {
    Optional<Instant> created = instant(JsonParser.at(answer, "creationTime"));
    if (created.isEmpty() || !(JsonParser.at(answer, "snapshots") instanceof List<?> members)) {
      return Optional.empty();
    }
    List<Optional<Snapshot>> read =
        members.stream().map(m -> snapshot(m, "", groupSnapshotId)).toList();
    if (read.stream().anyMatch(Optional::isEmpty)) {
      return Optional.empty();
    }
    return Optional.of(
        new GroupSnapshot(
            groupSnapshotId, name, read.stream().map(Optional::get).toList(), created.get()));
  }

  private static Optional<Instant> instant(Object value) {
    try {
      return Optional.of(Instant.parse(text(value)));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }
}

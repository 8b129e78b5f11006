package dev.soko.driver.state;

import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The stored form of a volume group snapshot: which volumes it was taken of and which snapshot is
 * each one's copy, in the order of the request. It lives in the one pool of its members. The
 * members are ordinary {@link SnapshotRecord}s that name the group; their IDs are chosen before any
 * of them is made, so that a record left CREATING by a crash names everything recovery has to
 * remove.
 *
 * @param sourceVolumeIds the volumes, in the order the request named them
 * @param snapshotIds the member snapshots: the i-th is the copy of the i-th source
 * @param spanningId for a node's part of a group across nodes, the whole group's ID (which names
 *     every node of the group), else empty. Optional in the stored form: a record without it is a
 *     group of one node, and a driver that does not know the field shows the part as a group of its
 *     own node, which it can still get and delete.
 */
public record GroupSnapshotRecord(
    String id,
    String name,
    String pool,
    List<String> sourceVolumeIds,
    List<String> snapshotIds,
    Instant createdAt,
    RecordState state,
    String spanningId) {

  /** Separates the IDs of a list in its one stored field: no ID contains it. */
  private static final String SEPARATOR = ",";

  public GroupSnapshotRecord {
    sourceVolumeIds = List.copyOf(sourceVolumeIds);
    snapshotIds = List.copyOf(snapshotIds);
    if (sourceVolumeIds.size() != snapshotIds.size()) {
      throw new IllegalArgumentException(
          "group "
              + id
              + " has "
              + sourceVolumeIds.size()
              + " sources but "
              + snapshotIds.size()
              + " snapshots");
    }
  }

  /** A group of one node. */
  public GroupSnapshotRecord(
      String id,
      String name,
      String pool,
      List<String> sourceVolumeIds,
      List<String> snapshotIds,
      Instant createdAt,
      RecordState state) {
    this(id, name, pool, sourceVolumeIds, snapshotIds, createdAt, state, "");
  }

  public GroupSnapshotRecord withState(RecordState newState) {
    return new GroupSnapshotRecord(
        id, name, pool, sourceVolumeIds, snapshotIds, createdAt, newState, spanningId);
  }

  /** The ID the group is known by: the whole group's for a part of one across nodes. */
  public String shownId() {
    return spanningId.isEmpty() ? id : spanningId;
  }

  public Map<String, String> toFields() {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("kind", "group");
    fields.put("id", id);
    fields.put("name", name);
    fields.put("pool", pool);
    fields.put("sourceVolumeIds", String.join(SEPARATOR, sourceVolumeIds));
    fields.put("snapshotIds", String.join(SEPARATOR, snapshotIds));
    fields.put("createdAt", createdAt.toString());
    fields.put("state", state.name());
    if (!spanningId.isEmpty()) {
      fields.put("spanningId", spanningId);
    }
    return fields;
  }

  /**
   * Rebuilds a record from its stored fields. Every ID in it is checked, since recovery turns the
   * member IDs into paths.
   *
   * @throws IllegalArgumentException when a field is missing or malformed
   */
  public static GroupSnapshotRecord fromFields(Map<String, String> fields) {
    String id = Fields.require(fields, "id");
    if (!Ids.isGroupId(id)) {
      throw new IllegalArgumentException("bad group id " + id);
    }
    return new GroupSnapshotRecord(
        id,
        Fields.require(fields, "name"),
        Fields.require(fields, "pool"),
        ids(fields, "sourceVolumeIds", Ids::isVolumeId),
        ids(fields, "snapshotIds", Ids::isSnapshotId),
        Instant.parse(Fields.require(fields, "createdAt")),
        RecordState.valueOf(Fields.require(fields, "state")),
        spanningId(fields, id));
  }

  /** The stored whole-group ID: it begins with the part's own ID and an {@code @}, or is absent. */
  private static String spanningId(Map<String, String> fields, String id) {
    String spanning = fields.getOrDefault("spanningId", "");
    if (!spanning.isEmpty() && !spanning.startsWith(id + "@")) {
      throw new IllegalArgumentException("bad spanning id " + spanning + " of group " + id);
    }
    return spanning;
  }

  /** A non-empty list of distinct IDs that each pass {@code valid}. */
  private static List<String> ids(Map<String, String> fields, String key, Predicate<String> valid) {
    List<String> ids = List.of(Fields.require(fields, key).split(SEPARATOR, -1));
    for (String each : ids) {
      if (!valid.test(each)) {
        throw new IllegalArgumentException("bad id in " + key + ": " + each);
      }
    }
    if (new HashSet<>(ids).size() != ids.size()) {
      throw new IllegalArgumentException(key + " names an id twice");
    }
    return ids;
  }
}

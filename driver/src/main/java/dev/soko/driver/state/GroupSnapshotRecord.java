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
 */
public record GroupSnapshotRecord(
    String id,
    String name,
    String pool,
    List<String> sourceVolumeIds,
    List<String> snapshotIds,
    Instant createdAt,
    RecordState state) {

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

  public GroupSnapshotRecord withState(RecordState newState) {
    return new GroupSnapshotRecord(
        id, name, pool, sourceVolumeIds, snapshotIds, createdAt, newState);
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
        RecordState.valueOf(Fields.require(fields, "state")));
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

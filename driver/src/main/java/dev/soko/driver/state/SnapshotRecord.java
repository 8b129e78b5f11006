package dev.soko.driver.state;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.Snapshot;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The stored form of a snapshot. It keeps the source volume's access and filesystem type so a
 * restore can refuse a request that would present the data differently.
 *
 * @param sizeBytes the size of the snapshot's image (its source's capacity): what it reserves in
 *     the pool, and the least a volume restored from it gets
 * @param restoreSizeBytes the size reported to clients: the capacity its source was requested with
 *     when the snapshot was taken, at most {@code sizeBytes}. Kubernetes refuses a restore claim
 *     smaller than it, so a claim of the source's own request must pass; the restored volume is
 *     never smaller than {@code sizeBytes} whatever it asks for
 * @param groupId the volume group snapshot it was taken as a member of, or empty for an independent
 *     snapshot. Stored only when set: records of releases before group snapshots have none
 * @param sourceParameters its source volume's StorageClass parameters when it was taken, for the
 *     attributes a restore keeps (an encrypted source's encryption). Stored only when set: records
 *     of releases before it have none
 */
public record SnapshotRecord(
    String id,
    String name,
    String pool,
    String sourceVolumeId,
    long sizeBytes,
    long restoreSizeBytes,
    AccessType accessType,
    String fsType,
    Instant createdAt,
    RecordState state,
    String groupId,
    Map<String, String> sourceParameters) {
  private static final String PARAM = "param.";

  public SnapshotRecord {
    sourceParameters = Map.copyOf(sourceParameters);
  }

  public SnapshotRecord withState(RecordState newState) {
    return new SnapshotRecord(
        id,
        name,
        pool,
        sourceVolumeId,
        sizeBytes,
        restoreSizeBytes,
        accessType,
        fsType,
        createdAt,
        newState,
        groupId,
        sourceParameters);
  }

  /** The snapshot as the engine reports it; {@code imagePresent}: its image file exists. */
  public Snapshot toSnapshot(boolean imagePresent) {
    return new Snapshot(
        id, name, sourceVolumeId, restoreSizeBytes, createdAt, imagePresent, groupId);
  }

  public Map<String, String> toFields() {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("kind", "snapshot");
    fields.put("id", id);
    fields.put("name", name);
    fields.put("pool", pool);
    fields.put("sourceVolumeId", sourceVolumeId);
    fields.put("sizeBytes", Long.toString(sizeBytes));
    fields.put("restoreSizeBytes", Long.toString(restoreSizeBytes));
    fields.put("accessType", accessType.name());
    fields.put("fsType", fsType);
    fields.put("createdAt", createdAt.toString());
    fields.put("state", state.name());
    if (!groupId.isEmpty()) {
      fields.put("groupId", groupId);
    }
    new TreeMap<>(sourceParameters).forEach((k, v) -> fields.put(PARAM + k, v));
    return fields;
  }

  /**
   * Rebuilds a record from its stored fields.
   *
   * @throws IllegalArgumentException when a field is missing or malformed
   */
  public static SnapshotRecord fromFields(Map<String, String> fields) {
    String id = Fields.require(fields, "id");
    if (!Ids.isSnapshotId(id)) {
      throw new IllegalArgumentException("bad snapshot id " + id);
    }
    long sizeBytes = Long.parseLong(Fields.require(fields, "sizeBytes"));
    // Records of releases before restoreSizeBytes was kept reported their image's size.
    String restoreSize = fields.get("restoreSizeBytes");
    String groupId = fields.getOrDefault("groupId", "");
    if (!groupId.isEmpty() && !Ids.isGroupId(groupId)) {
      throw new IllegalArgumentException("bad group id " + groupId);
    }
    return new SnapshotRecord(
        id,
        Fields.require(fields, "name"),
        Fields.require(fields, "pool"),
        Fields.require(fields, "sourceVolumeId"),
        sizeBytes,
        restoreSize == null ? sizeBytes : Long.parseLong(restoreSize),
        AccessType.valueOf(Fields.require(fields, "accessType")),
        Fields.require(fields, "fsType"),
        Instant.parse(Fields.require(fields, "createdAt")),
        RecordState.valueOf(Fields.require(fields, "state")),
        groupId,
        sourceParameters(fields));
  }

  private static Map<String, String> sourceParameters(Map<String, String> fields) {
    Map<String, String> out = new TreeMap<>();
    fields.forEach(
        (key, value) -> {
          if (key.startsWith(PARAM)) {
            out.put(key.substring(PARAM.length()), value);
          }
        });
    return out;
  }
}

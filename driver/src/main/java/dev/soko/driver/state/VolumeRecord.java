package dev.soko.driver.state;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The stored form of a volume.
 *
 * @param capacityBytes the size the controller granted, rounded up to the floor of the volume's
 *     type ({@code Sizes}); the image grows to it on the node
 * @param requestedBytes the capacity asked for: the largest {@code required_bytes} of the create
 *     and of any expansion (the resolved size when the create named none); never above {@code
 *     capacityBytes}. A snapshot reports it as its size, the smallest claim that restores it
 * @param parameters the StorageClass parameters of the creating request (for idempotency checks)
 * @param stagedAt the staging path while the volume is staged on this node, empty otherwise; lets
 *     the volume condition tell "never staged" from "staged but its mount or loop device vanished"
 * @param stageFlags the mount flags the staging mount was made with, so that it can be made again
 *     the same way (after an offline growth, or one cut short); empty when not staged, or staged by
 *     a driver that did not record them
 * @param mutableParameters the volume's mutable parameters (a VolumeAttributesClass's: its IO
 *     limits), as created or last modified; empty when it has none
 */
public record VolumeRecord(
    String id,
    String name,
    String pool,
    long capacityBytes,
    long requestedBytes,
    AccessType accessType,
    String fsType,
    ContentSource source,
    Instant createdAt,
    RecordState state,
    Map<String, String> parameters,
    String stagedAt,
    Optional<List<String>> stageFlags,
    Map<String, String> mutableParameters) {

  private static final String PARAM = "param.";
  private static final String MUTABLE = "mutable.";

  public VolumeRecord {
    parameters = Map.copyOf(parameters);
    mutableParameters = Map.copyOf(mutableParameters);
    stageFlags = stageFlags.map(List::copyOf);
  }

  public VolumeRecord withState(RecordState newState) {
    return new VolumeRecord(
        id,
        name,
        pool,
        capacityBytes,
        requestedBytes,
        accessType,
        fsType,
        source,
        createdAt,
        newState,
        parameters,
        stagedAt,
        stageFlags,
        mutableParameters);
  }

  /** After a growth request: the capacity granted and the (possibly larger) capacity asked for. */
  public VolumeRecord withCapacity(long newCapacity, long newRequested) {
    return new VolumeRecord(
        id,
        name,
        pool,
        newCapacity,
        newRequested,
        accessType,
        fsType,
        source,
        createdAt,
        state,
        parameters,
        stagedAt,
        stageFlags,
        mutableParameters);
  }

  /** Staged at {@code path}, where the staging mount was made with {@code flags}. */
  public VolumeRecord withStaged(String path, List<String> flags) {
    return new VolumeRecord(
        id,
        name,
        pool,
        capacityBytes,
        requestedBytes,
        accessType,
        fsType,
        source,
        createdAt,
        state,
        parameters,
        path,
        Optional.of(flags),
        mutableParameters);
  }

  /** Staged at {@code path} with flags unknown, or not staged when {@code path} is empty. */
  public VolumeRecord withStagedAt(String path) {
    return new VolumeRecord(
        id,
        name,
        pool,
        capacityBytes,
        requestedBytes,
        accessType,
        fsType,
        source,
        createdAt,
        state,
        parameters,
        path,
        Optional.empty(),
        mutableParameters);
  }

  /** With the mutable parameters a ModifyVolume set, whole. */
  public VolumeRecord withMutableParameters(Map<String, String> next) {
    return new VolumeRecord(
        id,
        name,
        pool,
        capacityBytes,
        requestedBytes,
        accessType,
        fsType,
        source,
        createdAt,
        state,
        parameters,
        stagedAt,
        stageFlags,
        next);
  }

  public Volume toVolume(VolumeCondition condition) {
    return new Volume(
        id, name, pool, capacityBytes, accessType, fsType, source, createdAt, condition);
  }

  public Map<String, String> toFields() {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("kind", "volume");
    fields.put("id", id);
    fields.put("name", name);
    fields.put("pool", pool);
    fields.put("capacityBytes", Long.toString(capacityBytes));
    fields.put("requestedBytes", Long.toString(requestedBytes));
    fields.put("accessType", accessType.name());
    fields.put("fsType", fsType);
    fields.put("sourceKind", sourceKind(source));
    fields.put("sourceId", sourceId(source));
    fields.put("createdAt", createdAt.toString());
    fields.put("state", state.name());
    fields.put("stagedAt", stagedAt);
    stageFlags.ifPresent(flags -> fields.put("stageFlags", String.join(",", flags)));
    new TreeMap<>(parameters).forEach((k, v) -> fields.put(PARAM + k, v));
    new TreeMap<>(mutableParameters).forEach((k, v) -> fields.put(MUTABLE + k, v));
    return fields;
  }

  /**
   * Rebuilds a record from its stored fields.
   *
   * @throws IllegalArgumentException when a field is missing or malformed
   */
  public static VolumeRecord fromFields(Map<String, String> fields) {
    String id = Fields.require(fields, "id");
    if (!Ids.isVolumeId(id)) {
      throw new IllegalArgumentException("bad volume id " + id);
    }
    Map<String, String> parameters = prefixed(fields, PARAM);
    // Records of releases before volumes had mutable parameters have none.
    Map<String, String> mutableParameters = prefixed(fields, MUTABLE);
    long capacityBytes = Long.parseLong(Fields.require(fields, "capacityBytes"));
    // Records of releases before requestedBytes was kept: what was granted is all that is known.
    String requested = fields.get("requestedBytes");
    return new VolumeRecord(
        id,
        Fields.require(fields, "name"),
        Fields.require(fields, "pool"),
        capacityBytes,
        requested == null ? capacityBytes : Long.parseLong(requested),
        AccessType.valueOf(Fields.require(fields, "accessType")),
        Fields.require(fields, "fsType"),
        source(Fields.require(fields, "sourceKind"), Fields.require(fields, "sourceId")),
        Instant.parse(Fields.require(fields, "createdAt")),
        RecordState.valueOf(Fields.require(fields, "state")),
        parameters,
        fields.getOrDefault("stagedAt", ""),
        Optional.ofNullable(fields.get("stageFlags")).map(VolumeRecord::flags),
        mutableParameters);
  }

  private static Map<String, String> prefixed(Map<String, String> fields, String prefix) {
    Map<String, String> out = new TreeMap<>();
    fields.forEach(
        (k, v) -> {
          if (k.startsWith(prefix)) {
            out.put(k.substring(prefix.length()), v);
          }
        });
    return out;
  }

  private static List<String> flags(String joined) {
    return joined.isEmpty() ? List.of() : Arrays.asList(joined.split(","));
  }

  private static String sourceKind(ContentSource source) {
    if (source instanceof ContentSource.FromSnapshot) {
      return "snapshot";
    }
    return source instanceof ContentSource.FromVolume ? "volume" : "empty";
  }

  private static String sourceId(ContentSource source) {
    if (source instanceof ContentSource.FromSnapshot s) {
      return s.snapshotId();
    }
    return source instanceof ContentSource.FromVolume v ? v.volumeId() : "";
  }

  private static ContentSource source(String kind, String id) {
    return switch (kind) {
      case "empty" -> ContentSource.EMPTY;
      case "snapshot" -> new ContentSource.FromSnapshot(id);
      case "volume" -> new ContentSource.FromVolume(id);
      default -> throw new IllegalArgumentException("bad source kind " + kind);
    };
  }
}

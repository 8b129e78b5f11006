package dev.soko.driver.volume;

import dev.soko.driver.attribute.AttributeKind;
import dev.soko.driver.attribute.AttributeRegistry;
import dev.soko.driver.attribute.AttributeSource;
import dev.soko.driver.attribute.NodeSecrets;
import dev.soko.driver.attribute.Publication;
import dev.soko.driver.attribute.VolumeShape;
import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.BlockDevices;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's side of a volume's attributes ({@link AttributeRegistry}): what the registry checks
 * a volume against, where a volume's values are kept (its record's StorageClass and mutable
 * parameters, as records always kept them) and which node events it hears of. The kinds themselves,
 * what they accept and what they do, live in their own packages ({@link AttributeKinds}).
 */
@SuppressWarnings("try") // a KeyedLocks.Held is used only for its scope
final class VolumeAttributes {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeAttributes.class);

  private final Catalog catalog;
  private final VolumeLocks locks;
  private final Backends backends;
  private final NodeVolumes node;
  private final AttributeRegistry registry;

  VolumeAttributes(
      Catalog catalog,
      VolumeLocks locks,
      Backends backends,
      NodeVolumes node,
      AttributeRegistry registry) {
    this.catalog = catalog;
    this.locks = locks;
    this.backends = backends;
    this.node = node;
    this.registry = registry;
  }

  /**
   * Checks a new volume's attributes in {@code pool} (its StorageClass parameters are kept as
   * given, for idempotency); the mutable values to keep. Refused (an {@code AttributeException})
   * when a value is malformed or the pool's volumes cannot have it.
   */
  Map<String, String> check(Pool pool, VolumeRequest request, String fsType) {
    VolumeShape shape = shape(pool, request.accessType(), fsType);
    registry.check(AttributeSource.CLASS_PARAMETERS, nonNull(request.parameters()), shape);
    return registry.check(
        AttributeSource.MUTABLE_PARAMETERS, nonNull(request.mutableParameters()), shape);
  }

  /** The StorageClass parameters the kinds own. */
  List<String> classParameters() {
    return registry.keys(AttributeSource.CLASS_PARAMETERS);
  }

  /**
   * Replaces the volume's mutable values, durably, then lets the kinds apply them (to every pod the
   * volume is published to).
   */
  void modify(String volumeId, Map<String, String> mutable) {
    VolumeRecord modified;
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = catalog.readyVolume(volumeId);
      Pool pool = catalog.pool(record.pool());
      Map<String, String> checked =
          registry.check(
              AttributeSource.MUTABLE_PARAMETERS,
              mutable,
              shape(pool, record.accessType(), record.fsType()));
      modified = record.withMutableParameters(checked);
      if (!checked.equals(record.mutableParameters())) {
        catalog.saveVolume(modified);
        LOG.info("volume {}: mutable parameters now {}", volumeId, checked);
      }
    }
    registry.changed(volumeId, kept(modified));
  }

  /** Before anything is mounted: refuses what the stage would lack (a missing secret). */
  void staging(StageRequest request) {
    Map<String, String> kept = kept(request.volumeId());
    if (registry.anyIn(kept)) {
      registry.staging(request.volumeId(), kept, secrets(request));
    }
  }

  void staged(StageRequest request) {
    if (registry.acting()) {
      registry.staged(
          request.volumeId(), request.stagingPath(), kept(request.volumeId()), secrets(request));
    }
  }

  private static NodeSecrets secrets(StageRequest request) {
    return request.secrets() == null ? NodeSecrets.none() : request.secrets();
  }

  /** Before unstage, while the staging path is still mounted. */
  void unstaging(String volumeId, Path stagingPath) {
    Map<String, String> kept = kept(volumeId);
    if (registry.anyIn(kept) && node.mountedAt(stagingPath)) {
      registry.unstaging(volumeId, stagingPath, kept);
    }
  }

  /** What the volume's attributes ask of its filesystem and of what its pods see. */
  VolumeForm form(String volumeId) {
    Map<String, String> kept = kept(volumeId);
    if (!registry.anyIn(kept)) {
      return VolumeForm.PLAIN;
    }
    return new VolumeForm(registry.filesystemFeatures(kept), registry.presentedDirectory(kept));
  }

  /**
   * The StorageClass parameters a copy of a volume whose record keeps {@code source} keeps, for the
   * {@code requested} ones: a kind may make it keep its source's (encryption).
   */
  Map<String, String> copiedParameters(Map<String, String> source, Map<String, String> requested) {
    return registry.copied(source, nonNull(requested));
  }

  void unstaged(String volumeId, Path stagingPath) {
    registry.unstaged(volumeId, stagingPath);
  }

  /** A publication to a pod (the kubelet's pod info); one for no pod has nothing to act on. */
  void published(PublishRequest request) {
    if (registry.acting() && !request.podUid().isEmpty()) {
      String id = request.volumeId();
      Map<String, String> kept = kept(id);
      registry.published(
          new Publication(id, request.targetPath(), request.podUid(), node.deviceNumber(id)), kept);
    }
  }

  void unpublished(String volumeId, Path target) {
    registry.unpublished(volumeId, target);
  }

  /** Starts the kind of class {@code type} acting ({@code start}), then {@link #resume}s. */
  <T extends AttributeKind> void start(Class<T> type, Consumer<T> start) {
    registry.kind(type).ifPresent(start);
    resume();
  }

  /**
   * Tells the acting kinds of every publication to a pod of a volume with attributes, from the
   * mount table: a restarted driver keeps no publications in memory, and without this a pod's
   * container that started while the driver was down, or later, and every later modification, would
   * go without them. Also for a pool opened late.
   */
  void resume() {
    if (!registry.acting()) {
      return;
    }
    for (VolumeRecord v : catalog.volumes().values()) {
      Map<String, String> kept = kept(v);
      if (v.state() != RecordState.READY || !registry.anyIn(kept)) {
        continue;
      }
      try {
        var device = node.deviceNumber(v.id());
        if (device.isPresent()) {
          node.forEachPodPublication(
              v.id(),
              (target, pod) ->
                  registry.published(new Publication(v.id(), target, pod, device), kept));
        }
      } catch (RuntimeException e) {
        LOG.warn("cannot find the pods of volume {} for its attributes: {}", v.id(), e.toString());
      }
    }
  }

  private VolumeShape shape(Pool pool, AccessType accessType, String fsType) {
    var backend = backends.of(pool);
    return new VolumeShape(
        pool.name(),
        backend.traits().flagName(),
        backend.nodeSide() instanceof BlockDevices,
        accessType,
        fsType);
  }

  /** What the volume's record keeps of its attributes; empty for a volume that is gone. */
  private Map<String, String> kept(String volumeId) {
    return catalog.volume(volumeId).map(VolumeAttributes::kept).orElse(Map.of());
  }

  /** What {@code record} keeps of its attributes: StorageClass and mutable parameters. */
  static Map<String, String> kept(VolumeRecord record) {
    Map<String, String> kept = new HashMap<>(record.parameters());
    kept.putAll(record.mutableParameters());
    return kept;
  }

  private static Map<String, String> nonNull(Map<String, String> map) {
    return map == null ? Map.of() : map;
  }
}

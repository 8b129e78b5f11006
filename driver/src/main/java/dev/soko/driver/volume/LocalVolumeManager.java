package dev.soko.driver.volume;

import dev.soko.driver.attribute.AttributeRegistry;
import dev.soko.driver.backend.Backends;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.iolimit.IoLimitAttribute;
import dev.soko.driver.iolimit.PodThrottles;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.PoolCapacity;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.LoopDevices;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.mount.SystemMounter;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolVerdict;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node-local storage engine: volumes are sparse image files in pool directories, attached
 * through loop devices, or btrfs subvolumes bind-mounted (each pool's backend, {@link Backends}).
 * Construction checks every pool, opens the ones that pass and runs crash recovery on them ({@link
 * PoolOpening}); a pool that passes but cannot be opened keeps {@link #ready()} false, and a
 * refused or unselected pool offers no capacity and takes no new volumes. The work is done by small
 * collaborators: {@link VolumeProvisioner} and {@link SnapshotProvisioner}, {@link
 * GroupSnapshotProvisioner} (controller side), {@link CatalogViews} (lists and metrics), {@link
 * NodeLifecycle} over {@link NodeVolumes}, {@link NodeExpansion} and {@link VolumeStats} (node
 * side), and {@link VolumeAttributes} for each volume's attributes (IO limits), whose kinds it
 * never names ({@link AttributeKinds}). Every operation reports the lower layers' typed failures as
 * {@link StorageException}s ({@link Failures}), which is what the {@link VolumeManager} contract
 * promises.
 */
public final class LocalVolumeManager implements VolumeManager {
  private static final Logger LOG = LoggerFactory.getLogger(LocalVolumeManager.class);

  private final DriverConfig config;
  private final Catalog catalog;
  private final Backends backends;
  private final Health health;
  private final VolumeProvisioner volumes;
  private final SnapshotProvisioner snapshots;
  private final GroupSnapshotProvisioner groups;
  private final BlockMetadataReader blockMetadata;
  private final VolumeReadCopies readCopies;
  private final NodeLifecycle lifecycle;
  private final CatalogViews views;
  private final NodeExpansion expansion;
  private final ImmediateGrowth growth;
  private final VolumeAttributes attributes;
  private final VolumeStats stats;
  private final PoolOpening pools;

  /**
   * The production wiring: real processes, mounts and loop devices; {@code labels} are this node's,
   * for the pools' node selectors.
   */
  public static LocalVolumeManager open(DriverConfig config, NodeLabels labels) {
    return open(config, labels, RemoteSnapshots.NONE);
  }

  /**
   * As {@link #open(DriverConfig, NodeLabels)}, restoring the snapshots other nodes hold ({@code
   * remote}) by copying them here.
   */
  public static LocalVolumeManager open(
      DriverConfig config, NodeLabels labels, RemoteSnapshots remote) {
    Exec exec = new ProcessExec();
    return new LocalVolumeManager(
        config, exec, new SystemMounter(exec), new Losetup(), labels, remote);
  }

  /** The production wiring without node labels: pools with a node selector are not selected. */
  public static LocalVolumeManager open(DriverConfig config) {
    Exec exec = new ProcessExec();
    return new LocalVolumeManager(config, exec, new SystemMounter(exec), new Losetup());
  }

  /** An engine that knows no node labels: pools with a node selector are not selected. */
  public LocalVolumeManager(DriverConfig config, Exec exec, Mounter mounter, LoopDevices loops) {
    this(
        config,
        exec,
        mounter,
        loops,
        NodeLabels.unknownBecause("the driver does not read them (no API server access)"));
  }

  public LocalVolumeManager(
      DriverConfig config, Exec exec, Mounter mounter, LoopDevices loops, NodeLabels labels) {
    this(config, exec, mounter, loops, labels, RemoteSnapshots.NONE);
  }

  /**
   * @param remote the snapshots of other nodes, which a restore of a snapshot this node does not
   *     hold copies here ({@link RemoteSnapshots#NONE}: such a restore finds no snapshot)
   */
  public LocalVolumeManager(
      DriverConfig config,
      Exec exec,
      Mounter mounter,
      LoopDevices loops,
      NodeLabels labels,
      RemoteSnapshots remote) {
    this(config, exec, mounter, loops, labels, remote, AttributeKinds.all());
  }

  /** As above, with the per-volume attributes {@code attributeKinds} knows (tests add kinds). */
  LocalVolumeManager(
      DriverConfig config,
      Exec exec,
      Mounter mounter,
      LoopDevices loops,
      NodeLabels labels,
      RemoteSnapshots remote,
      AttributeRegistry attributeKinds) {
    this.config = config;
    this.catalog = new Catalog(config.pools().stream().map(PoolConfig::name).toList());
    VolumeLocks locks = new VolumeLocks();
    PathPolicy paths = new PathPolicy(config.allowedPathRoots());
    // The one place that makes the backends; each pool's configuration picks its own, and nothing
    // below names an implementation.
    this.backends = Backends.onHost(exec, loops);
    Presentations presentations =
        new Presentations(
            backends,
            catalog,
            mounter,
            paths,
            record -> attributeKinds.mountHoldsState(VolumeAttributes.kept(record)));
    VolumeCopier copier = new VolumeCopier(mounter, backends, presentations);
    this.health = new Health(catalog, mounter, backends, presentations);
    NodeVolumes node = new NodeVolumes(catalog, locks, backends, presentations, paths, mounter);
    this.attributes = new VolumeAttributes(catalog, locks, backends, node, attributeKinds);
    this.lifecycle = new NodeLifecycle(node, attributes);
    GrowthGrants grants = new GrowthGrants(catalog);
    this.volumes =
        new VolumeProvisioner(
            catalog, locks, backends, presentations, copier, attributes, remote, grants);
    this.snapshots = new SnapshotProvisioner(catalog, locks, copier, backends);
    this.groups = new GroupSnapshotProvisioner(catalog, locks, copier, snapshots, config.nodeId());
    this.blockMetadata = new BlockMetadataReader(catalog, backends, config.pools());
    this.readCopies = new VolumeReadCopies(catalog, locks, copier, backends);
    this.expansion = new NodeExpansion(catalog, locks, backends, presentations, paths, grants);
    this.growth = new ImmediateGrowth(catalog, locks, backends, presentations, grants);
    this.stats = new VolumeStats(catalog, health, paths, presentations);
    this.views = new CatalogViews(catalog, health, snapshots);
    Recovery recovery = new Recovery(catalog, mounter, backends, presentations);
    // After the collaborators: opening a pool recovers it and lets its volumes' attributes resume.
    this.pools =
        new PoolOpening(config, labels, catalog, backends, exec, recovery, attributes::resume);
  }

  /** What start-up recovery repaired, one report per usable pool. */
  List<Recovery.Report> recoveryReports() {
    return pools.recoveryReports();
  }

  /** Empty once every configured pool is open; retries the ones that were not usable yet. */
  @Override
  public Optional<String> notReady() {
    return pools.notReady();
  }

  @Override
  public Volume createVolume(VolumeRequest request) {
    if (catalog.volumeByName(request.name()).isEmpty()) {
      pools.requireReady(request.pool());
    }
    pools.retryUnusable();
    return Failures.mapped(() -> volumes.create(request));
  }

  @Override
  public void deleteVolume(String volumeId) {
    Failures.mapped(() -> volumes.delete(volumeId));
  }

  @Override
  public Optional<Volume> findVolume(String volumeId) {
    return views.findVolume(volumeId);
  }

  @Override
  public Page<Volume> listVolumes(String startingToken, int maxEntries) {
    return views.listVolumes(startingToken, maxEntries);
  }

  @Override
  public Snapshot createSnapshot(String name, String sourceVolumeId) {
    return Failures.mapped(() -> snapshots.create(name, sourceVolumeId));
  }

  @Override
  public void deleteSnapshot(String snapshotId) {
    Failures.mapped(() -> snapshots.delete(snapshotId));
  }

  @Override
  public Page<Snapshot> listSnapshots(SnapshotFilter filter, String startingToken, int maxEntries) {
    return views.listSnapshots(filter, startingToken, maxEntries);
  }

  @Override
  public GroupSnapshot createGroupSnapshot(String name, List<String> sourceVolumeIds) {
    return Failures.mapped(() -> groups.create(name, sourceVolumeIds));
  }

  @Override
  public GroupSnapshot takeGroupPart(
      String name, SpanningGroupId id, List<String> sourceVolumeIds, FreezeGate gate) {
    return Failures.mapped(
        () -> groups.create(name, sourceVolumeIds, Optional.of(id.checkLength()), gate));
  }

  @Override
  public GroupSnapshot getGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
    return Failures.mapped(() -> groups.get(groupSnapshotId, snapshotIds));
  }

  @Override
  public void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
    Failures.mapped(() -> groups.delete(groupSnapshotId, snapshotIds));
  }

  @Override
  public boolean servesBlockMetadata() {
    return blockMetadata.servesBlockMetadata();
  }

  @Override
  public BlockStream allocatedBlocks(String snapshotId, long startingOffset) {
    return Failures.mapped(() -> blockMetadata.allocatedBlocks(snapshotId, startingOffset));
  }

  @Override
  public SnapshotImage snapshotSource(String snapshotId) {
    return Failures.mapped(() -> blockMetadata.snapshotSource(snapshotId));
  }

  @Override
  public VolumeImage volumeSource(String volumeId) {
    return Failures.mapped(() -> readCopies.describe(volumeId));
  }

  @Override
  public ReadCopy readCopy(String volumeId) {
    return Failures.mapped(() -> readCopies.open(volumeId));
  }

  @Override
  public FileTree snapshotTree(String snapshotId) {
    return Failures.mapped(() -> blockMetadata.snapshotTree(snapshotId));
  }

  @Override
  public FileTree volumeTree(String volumeId) {
    return Failures.mapped(() -> readCopies.openTree(volumeId));
  }

  @Override
  public BlockStream changedBlocks(
      String baseSnapshotId, String targetSnapshotId, long startingOffset) {
    return Failures.mapped(
        () -> blockMetadata.changedBlocks(baseSnapshotId, targetSnapshotId, startingOffset));
  }

  @Override
  public ExpandResult expandVolume(String volumeId, long requiredBytes, long limitBytes) {
    return Failures.mapped(() -> volumes.expand(volumeId, requiredBytes, limitBytes));
  }

  @Override
  public List<PoolCapacity> capacity() {
    pools.retryUnusable();
    Map<String, PoolVerdict> verdicts = pools.verdicts();
    return catalog.pools().stream()
        .filter(p -> verdicts.get(p.name()).ready())
        .map(Pool::capacity)
        .toList();
  }

  @Override
  public Map<String, PoolVerdict> poolVerdicts() {
    return pools.verdicts();
  }

  @Override
  public void onPoolVerdicts(Consumer<Map<String, PoolVerdict>> listener) {
    pools.onVerdicts(listener);
  }

  @Override
  public MetricsView metricsView() {
    return views.metricsView();
  }

  @Override
  public void stage(StageRequest request) {
    lifecycle.stage(request);
  }

  @Override
  public void unstage(String volumeId, Path stagingPath) {
    lifecycle.unstage(volumeId, stagingPath);
  }

  /**
   * Applies the volumes' IO limits to the pods they are published to, from now on; without it (no
   * block IO controller on this node) a volume's limits are kept but not applied.
   */
  public void limitIo(PodThrottles podThrottles) {
    attributes.start(IoLimitAttribute.class, kind -> kind.throttleWith(podThrottles));
  }

  @Override
  public void publish(PublishRequest request) {
    lifecycle.publish(request);
  }

  @Override
  public void unpublish(String volumeId, Path targetPath) {
    lifecycle.unpublish(volumeId, targetPath);
  }

  @Override
  public void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
    Failures.mapped(() -> attributes.modify(volumeId, mutableParameters));
  }

  @Override
  public List<String> attributeParameters() {
    return attributes.classParameters();
  }

  @Override
  public VolumeUsage usage(String volumeId, Path volumePath) {
    return Failures.mapped(() -> stats.usage(volumeId, volumePath));
  }

  @Override
  public long expandOnNode(String volumeId, Path volumePath, long requiredBytes, long limitBytes) {
    return Failures.mapped(() -> expansion.expand(volumeId, volumePath, requiredBytes, limitBytes));
  }

  @Override
  public ExpandResult expandNow(String volumeId, long requiredBytes, long limitBytes) {
    return Failures.mapped(() -> growth.grow(volumeId, requiredBytes, limitBytes));
  }

  @Override
  public int maxVolumesPerNode() {
    return config.maxVolumesPerNode();
  }

  @Override
  public void close() {
    // Volumes stay attached and mounted across a driver restart, as kubelet expects; only the
    // pools' journals are folded into their record files, so a clean stop leaves plain records.
    for (Pool pool : catalog.pools()) {
      try {
        pool.close();
      } catch (RuntimeException e) {
        LOG.warn(
            "cannot checkpoint pool {}; its journal is replayed at the next start", pool.name(), e);
      }
    }
  }
}

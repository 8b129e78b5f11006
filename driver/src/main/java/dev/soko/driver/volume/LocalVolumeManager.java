package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.iolimit.IoLimits;
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
import dev.soko.driver.pool.PoolCheck;
import dev.soko.driver.pool.PoolSelector;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node-local storage engine: volumes are sparse image files in pool directories, attached
 * through loop devices, or btrfs subvolumes bind-mounted (each pool's backend, {@link Backends}).
 * Construction checks every pool (its node selector against the node's labels, {@link
 * PoolSelector}, then its directory, {@link PoolCheck}), opens the ones that pass and runs crash
 * recovery on them; a pool that passes but cannot be opened keeps {@link #ready()} false. A refused
 * or unselected pool is not opened (unless an earlier run left volumes there, which keep working),
 * offers no capacity and takes no new volumes; it is checked again now and then, and at once when
 * the node's labels change. The work is done by small collaborators: {@link VolumeProvisioner} and
 * {@link SnapshotProvisioner}, {@link GroupSnapshotProvisioner} (controller side), {@link
 * NodeVolumes}, {@link NodeExpansion} and {@link VolumeStats} (node side). Every operation reports
 * the lower layers' typed failures as {@link StorageException}s ({@link Failures}), which is what
 * the {@link VolumeManager} contract promises.
 */
public final class LocalVolumeManager implements VolumeManager {
  private static final Logger LOG = LoggerFactory.getLogger(LocalVolumeManager.class);

  private final DriverConfig config;
  private final Catalog catalog;
  private final Exec exec;
  private final Backends backends;
  private final Recovery recovery;
  private final Health health;
  private final VolumeProvisioner volumes;
  private final SnapshotProvisioner snapshots;
  private final GroupSnapshotProvisioner groups;
  private final BlockMetadataReader blockMetadata;
  private final NodeVolumes node;
  private final NodeExpansion expansion;
  private final ImmediateGrowth growth;
  private final VolumeAttributes attributes;
  private volatile PodThrottles throttles;
  private final VolumeStats stats;
  private final PoolStates states;
  private final List<PoolConfig> unusablePools = new ArrayList<>();
  private final List<Recovery.Report> recoveryReports = new ArrayList<>();

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
    this.config = config;
    this.exec = exec;
    this.catalog = new Catalog(config.pools().stream().map(PoolConfig::name).toList());
    VolumeLocks locks = new VolumeLocks();
    PathPolicy paths = new PathPolicy(config.allowedPathRoots());
    // The one place that makes the backends; each pool's configuration picks its own, and nothing
    // below names an implementation.
    this.backends = Backends.onHost(exec, loops);
    Presentations presentations = new Presentations(backends, catalog, mounter, paths);
    VolumeCopier copier = new VolumeCopier(mounter, backends, presentations);
    this.health = new Health(catalog, mounter, backends, presentations);
    this.attributes = new VolumeAttributes(catalog, locks, backends);
    this.volumes =
        new VolumeProvisioner(catalog, locks, backends, presentations, copier, attributes, remote);
    this.snapshots = new SnapshotProvisioner(catalog, locks, copier, backends);
    this.groups = new GroupSnapshotProvisioner(catalog, locks, copier, snapshots, config.nodeId());
    this.blockMetadata = new BlockMetadataReader(catalog, backends, config.pools());
    this.node = new NodeVolumes(catalog, locks, backends, presentations, paths, mounter);
    this.expansion = new NodeExpansion(catalog, locks, backends, presentations, paths, volumes);
    this.growth = new ImmediateGrowth(catalog, locks, backends, presentations, volumes);
    this.stats = new VolumeStats(catalog, health, paths, presentations);
    this.recovery = new Recovery(catalog, mounter, backends, presentations);
    PoolCheck directories = PoolCheck.forHost(config.kubeletDir(), exec);
    this.states =
        new PoolStates(
            config.pools(),
            pool -> {
              // Selection first: the directory of a pool that is not for this node is not looked
              // at.
              PoolVerdict selected = PoolSelector.verdict(pool, labels.state());
              PoolVerdict verdict = selected.ready() ? directories.check(pool) : selected;
              if (verdict.ready()) {
                tidy(pool.name(), backends);
              }
              return verdict;
            },
            System::nanoTime,
            this::volumeCount);
    unusablePools.addAll(config.pools());
    openPools();
    labels.onChange(this::nodeLabelsChanged);
  }

  /**
   * The re-check's housekeeping of an open pool (what deletes left for later): a pool re-checked
   * before it is opened has none yet, and recovery tidies it when it opens.
   */
  private void tidy(String poolName, Backends backends) {
    for (Pool pool : catalog.pools()) {
      if (pool.name().equals(poolName)) {
        try {
          backends.of(pool).tidy(pool);
        } catch (RuntimeException e) {
          LOG.warn("cannot tidy pool {}: {}", poolName, e.toString());
        }
      }
    }
  }

  /** A relabelled node: verdicts now, and a pool just selected opened at once. */
  private void nodeLabelsChanged() {
    states.recheck();
    notReady(); // opens the pools that are usable now
  }

  private int volumeCount(String pool) {
    return (int)
        catalog.volumes().values().stream()
            .filter(v -> v.state() == RecordState.READY && v.pool().equals(pool))
            .count();
  }

  /** Opens and recovers every pool not yet usable; a pool that fails stays for the next try. */
  private synchronized boolean openPools() {
    Map<String, PoolVerdict> verdicts = states.refresh();
    for (var it = unusablePools.iterator(); it.hasNext(); ) {
      PoolConfig poolConfig = it.next();
      if (!verdicts.get(poolConfig.name()).ready() && !PoolCheck.holdsPool(poolConfig.path())) {
        continue; // refused or not selected: nothing is written into its directory
      }
      try {
        Pool pool =
            Pool.open(poolConfig, backends.of(poolConfig.backend()).traits().layout(), exec);
        recoveryReports.add(recovery.run(pool));
        catalog.addPool(pool);
        it.remove();
        PodThrottles t = throttles;
        if (t != null) {
          resumeLimits(t); // a pool opened late: its volumes' pods get their limits too
        }
      } catch (RuntimeException e) {
        LOG.error("{}", e.getMessage());
      }
    }
    return failingPools(verdicts).isEmpty();
  }

  /** Pools that passed their checks but could not be opened. */
  private List<String> failingPools(Map<String, PoolVerdict> verdicts) {
    return unusablePools.stream()
        .map(PoolConfig::name)
        .filter(name -> verdicts.get(name).ready())
        .toList();
  }

  /** What start-up recovery repaired, one report per usable pool. */
  synchronized List<Recovery.Report> recoveryReports() {
    return List.copyOf(recoveryReports);
  }

  /** Empty once every configured pool is open; retries the ones that were not usable yet. */
  @Override
  public synchronized Optional<String> notReady() {
    if (unusablePools.isEmpty() || openPools()) {
      return Optional.empty();
    }
    // Names only: this answer may leave the node (a probe on the pod IP); the log has the errors.
    return Optional.of(
        "pools not usable yet: "
            + String.join(", ", failingPools(states.refresh()))
            + " (the driver log says why)");
  }

  @Override
  public Volume createVolume(VolumeRequest request) {
    if (catalog.volumeByName(request.name()).isEmpty()) {
      states.requireReady(request.pool());
    }
    if (!unusablePools.isEmpty()) {
      notReady(); // a pool refused at start may have been mounted since
    }
    return Failures.mapped(() -> volumes.create(request));
  }

  @Override
  public void deleteVolume(String volumeId) {
    Failures.mapped(() -> volumes.delete(volumeId));
  }

  @Override
  public Optional<Volume> findVolume(String volumeId) {
    return catalog
        .volume(volumeId)
        .filter(r -> r.state() == RecordState.READY)
        .map(r -> r.toVolume(health.view().condition(r)));
  }

  @Override
  public Page<Volume> listVolumes(String startingToken, int maxEntries) {
    TreeMap<String, VolumeRecord> ready = new TreeMap<>();
    catalog.volumes().values().stream()
        .filter(v -> v.state() == RecordState.READY)
        .forEach(v -> ready.put(v.id(), v));
    Page<VolumeRecord> page = Paging.page(ready, startingToken, maxEntries, Ids::isVolumeId);
    Health.View view = health.view();
    return new Page<>(
        page.items().stream().map(r -> r.toVolume(view.condition(r))).toList(), page.nextToken());
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
    SnapshotFilter f = filter == null ? SnapshotFilter.ALL : filter;
    TreeMap<String, SnapshotRecord> matching = new TreeMap<>();
    catalog.snapshots().values().stream()
        .filter(s -> s.state() == RecordState.READY)
        .filter(s -> f.snapshotId().isEmpty() || s.id().equals(f.snapshotId()))
        .filter(s -> f.sourceVolumeId().isEmpty() || s.sourceVolumeId().equals(f.sourceVolumeId()))
        .forEach(s -> matching.put(s.id(), s));
    Page<SnapshotRecord> page = Paging.page(matching, startingToken, maxEntries, Ids::isSnapshotId);
    return new Page<>(page.items().stream().map(snapshots::describe).toList(), page.nextToken());
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
  public SnapshotImage snapshotImage(String snapshotId) {
    return Failures.mapped(() -> blockMetadata.snapshotImage(snapshotId));
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
    if (!unusablePools.isEmpty()) {
      notReady(); // a pool refused at start may have been mounted since
    }
    Map<String, PoolVerdict> verdicts = states.refresh();
    return catalog.pools().stream()
        .filter(p -> verdicts.get(p.name()).ready())
        .map(Pool::capacity)
        .toList();
  }

  @Override
  public Map<String, PoolVerdict> poolVerdicts() {
    return states.refresh();
  }

  @Override
  public void onPoolVerdicts(Consumer<Map<String, PoolVerdict>> listener) {
    states.onChange(listener);
  }

  @Override
  public MetricsView metricsView() {
    Map<String, Integer> volumeCounts = new HashMap<>();
    Map<String, Integer> snapshotCounts = new HashMap<>();
    Health.View view = health.view();
    List<MetricsView.VolumeRow> volumeRows = new ArrayList<>();
    for (VolumeRecord r : catalog.volumes().values()) {
      if (r.state() == RecordState.READY) {
        volumeCounts.merge(r.pool(), 1, Integer::sum);
        volumeRows.add(
            new MetricsView.VolumeRow(
                r.id(), r.pool(), r.capacityBytes(), view.condition(r).abnormal()));
      }
    }
    catalog.snapshots().values().stream()
        .filter(s -> s.state() == RecordState.READY)
        .forEach(s -> snapshotCounts.merge(s.pool(), 1, Integer::sum));
    List<MetricsView.PoolRow> poolRows =
        catalog.pools().stream()
            .map(
                p ->
                    new MetricsView.PoolRow(
                        p.report(),
                        volumeCounts.getOrDefault(p.name(), 0),
                        snapshotCounts.getOrDefault(p.name(), 0)))
            .toList();
    return new MetricsView(poolRows, volumeRows);
  }

  @Override
  public void stage(StageRequest request) {
    Failures.mapped(() -> node.stage(request));
  }

  @Override
  public void unstage(String volumeId, Path stagingPath) {
    Failures.mapped(() -> node.unstage(volumeId, stagingPath));
  }

  /**
   * Applies the volumes' IO limits to the pods they are published to, from now on; without it (no
   * block IO controller on this node) a volume's limits are kept but not applied.
   */
  public void limitIo(PodThrottles podThrottles) {
    this.throttles = podThrottles;
    resumeLimits(podThrottles);
  }

  /**
   * Hands {@code t} the pods that volumes with IO limits are published to, from the mount table: a
   * restarted driver keeps no publications in memory, and without this a pod's container that
   * started while the driver was down, or later, and every later modification, would go unlimited.
   */
  private void resumeLimits(PodThrottles t) {
    for (VolumeRecord v : catalog.volumes().values()) {
      if (v.state() != RecordState.READY || v.mutableParameters().isEmpty()) {
        continue;
      }
      try {
        node.deviceNumber(v.id())
            .ifPresent(
                device ->
                    node.forEachPodPublication(
                        v.id(),
                        (target, pod) ->
                            t.published(target, v.id(), pod, device, attributes.limits(v.id()))));
      } catch (RuntimeException e) {
        LOG.warn("cannot find the pods of volume {} for its IO limits: {}", v.id(), e.toString());
      }
    }
  }

  @Override
  public void publish(PublishRequest request) {
    Failures.mapped(() -> node.publish(request));
    PodThrottles t = throttles;
    if (t != null && !request.podUid().isEmpty()) {
      Failures.mapped(
          () ->
              node.deviceNumber(request.volumeId())
                  .ifPresent(
                      device ->
                          t.published(
                              request.targetPath(),
                              request.volumeId(),
                              request.podUid(),
                              device,
                              attributes.limits(request.volumeId()))));
    }
  }

  @Override
  public void unpublish(String volumeId, Path targetPath) {
    Failures.mapped(() -> node.unpublish(volumeId, targetPath));
    PodThrottles t = throttles;
    if (t != null) {
      t.unpublished(targetPath);
    }
  }

  @Override
  public void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
    IoLimits limits = Failures.mapped(() -> attributes.modify(volumeId, mutableParameters));
    PodThrottles t = throttles;
    if (t != null) {
      t.changed(volumeId, limits);
    }
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

package dev.soko.driver.volume;

import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.VolumeRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Volume group snapshots: one snapshot of each of several volumes of one pool, taken while all of
 * their staged filesystems are frozen and the others are not in use, so that together they hold one
 * instant (what an application spread over several volumes needs to restart from); a group with a
 * member in use that cannot be frozen is refused. The group's record names every member before
 * anything is made and is written CREATING; it becomes READY once every member is, and recovery
 * removes a group that a crash cut short, members and all. Each member is an ordinary snapshot that
 * names its group: it restores like any other, and deleting it alone harms no other member (the
 * group then reports not ready to use).
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class GroupSnapshotProvisioner {
  private static final Logger LOG = LoggerFactory.getLogger(GroupSnapshotProvisioner.class);

  private final Catalog catalog;
  private final VolumeLocks locks;
  private final VolumeCopier copier;
  private final SnapshotProvisioner snapshots;
  private final String node;

  /** {@code node} is this node's ID, which the error for a volume held elsewhere names. */
  GroupSnapshotProvisioner(
      Catalog catalog,
      VolumeLocks locks,
      VolumeCopier copier,
      SnapshotProvisioner snapshots,
      String node) {
    this.catalog = catalog;
    this.locks = locks;
    this.copier = copier;
    this.snapshots = snapshots;
    this.node = node;
  }

  /**
   * Takes a group snapshot of {@code sourceVolumeIds}, or returns the one of that name when it was
   * taken of the same volumes (in any order).
   */
  GroupSnapshot create(String name, List<String> sourceVolumeIds) {
    return create(name, sourceVolumeIds, Optional.empty(), FreezeGate.NONE);
  }

  /**
   * As {@link #create(String, List)}, for this node's part of a group across nodes: the part is
   * kept under {@code spanning}'s part ID and shown as the whole group's ID, and its copies wait
   * for {@code gate} with the members frozen.
   */
  GroupSnapshot create(
      String name,
      List<String> sourceVolumeIds,
      Optional<SpanningGroupId> spanning,
      FreezeGate gate) {
    Names.check("group snapshot", name);
    checkSources(sourceVolumeIds);
    try (KeyedLocks.Held nameLock = locks.groupName(name)) {
      Optional<GroupSnapshotRecord> existing = catalog.groupByName(name);
      if (existing.isPresent()) {
        return existing(existing.get(), sourceVolumeIds);
      }
      // Every member at once, so that none is deleted, grown or staged elsewhere meanwhile.
      try (KeyedLocks.Held volumeLocks = locks.volumes(sourceVolumeIds)) {
        List<VolumeRecord> sources = sourceVolumeIds.stream().map(this::source).toList();
        Pool pool = onePool(sources);
        return take(name, sources, pool, holds(name, pool, sources), spanning, gate);
      }
    }
  }

  private static void checkSources(List<String> sourceVolumeIds) {
    if (sourceVolumeIds.isEmpty()) {
      throw StorageException.invalid("source volume IDs are required");
    }
    if (new HashSet<>(sourceVolumeIds).size() != sourceVolumeIds.size()) {
      throw StorageException.invalid("source volume IDs name a volume twice");
    }
  }

  /**
   * A source volume, complete; NOT_FOUND when this node does not hold it. In a cluster the node of
   * a group's first volume is asked for the whole group (docs/snapshots.md), so a volume missing
   * here is most likely on another node: the message says so, and what the user can do about it, as
   * csi-snapshotter shows it on the VolumeGroupSnapshot.
   */
  private VolumeRecord source(String volumeId) {
    if (catalog.volume(volumeId).isEmpty()) {
      throw StorageException.notFound(
          "volume %s is not on this node %s: a group snapshot's volumes must all be on one node",
          Catalog.shown(volumeId), Catalog.shown(node));
    }
    return catalog.readyVolume(volumeId);
  }

  /** The answer to a retried create: the group it made, if it was of the same volumes. */
  private GroupSnapshot existing(GroupSnapshotRecord found, List<String> sourceVolumeIds) {
    if (!Set.copyOf(found.sourceVolumeIds()).equals(Set.copyOf(sourceVolumeIds))) {
      throw StorageException.alreadyExists(
          "a group snapshot named %s exists for other volumes", Catalog.shown(found.name()));
    }
    if (found.state() != RecordState.READY) {
      throw new StorageException(
          StorageException.Reason.ABORTED,
          "group snapshot " + found.id() + " is " + found.state().name().toLowerCase(Locale.ROOT));
    }
    return describe(found);
  }

  /** The one pool of all the volumes: a group's members are copies in their sources' pool. */
  private Pool onePool(List<VolumeRecord> sources) {
    Set<String> pools = new TreeSet<>();
    sources.forEach(v -> pools.add(v.pool()));
    if (pools.size() > 1) {
      throw StorageException.invalid(
          "the volumes of a group snapshot must be in one pool of this node; these are in pools %s",
          String.join(", ", pools));
    }
    return catalog.pool(pools.iterator().next());
  }

  /**
   * How each member is kept still during the copies, or FAILED_PRECONDITION, before anything is
   * made, naming every member that cannot be and why. Copied one after another, such a member would
   * hold a later instant than the others, and the group would not be what its name promises.
   */
  private List<CopyHold> holds(String name, Pool pool, List<VolumeRecord> sources) {
    List<CopyHold> holds =
        copier.holds(
            pool,
            sources.stream().map(v -> new VolumeCopier.Source(v, catalog.location(v))).toList());
    List<String> unfreezable =
        IntStream.range(0, sources.size())
            .filter(i -> holds.get(i).unfreezable().isPresent())
            .mapToObj(
                i ->
                    "volume "
                        + Catalog.shown(sources.get(i).id())
                        + ": "
                        + holds.get(i).unfreezable().get())
            .toList();
    if (!unfreezable.isEmpty()) {
      throw StorageException.precondition(
          "group snapshot %s cannot copy its volumes at one instant, so none is copied: %s. A group"
              + " may hold staged filesystem volumes, which are frozen together, and volumes not in"
              + " use",
          Catalog.shown(name), String.join("; ", unfreezable));
    }
    return holds;
  }

  /**
   * Records the group CREATING with its members' IDs, records each member CREATING, freezes every
   * staged filesystem, copies every volume, thaws them all, and records the members and then the
   * group READY. A failure undoes everything made.
   */
  private GroupSnapshot take(
      String name,
      List<VolumeRecord> sources,
      Pool pool,
      List<CopyHold> holds,
      Optional<SpanningGroupId> spanning,
      FreezeGate gate) {
    String groupId = spanning.map(SpanningGroupId::partId).orElseGet(Ids::newGroupId);
    GroupSnapshotRecord group =
        new GroupSnapshotRecord(
            groupId,
            name,
            pool.name(),
            sources.stream().map(VolumeRecord::id).toList(),
            sources.stream().map(v -> Ids.newSnapshotId()).toList(),
            Instant.now(),
            RecordState.CREATING,
            spanning.map(SpanningGroupId::id).orElse(""));
    catalog.saveGroup(group);
    List<SnapshotProvisioner.Pending> begun = new ArrayList<>();
    try {
      for (int i = 0; i < sources.size(); i++) {
        VolumeRecord source = sources.get(i);
        begun.add(
            snapshots.begin(
                group.snapshotIds().get(i), groupId + "/" + source.id(), source, groupId));
      }
    } catch (RuntimeException e) {
      // As for a single snapshot: a pool without room says so (RESOURCE_EXHAUSTED).
      undo(group, begun);
      throw e;
    }
    try {
      // Recorded before the freeze, which then lasts only as long as the copies. The members not
      // frozen are not in use, and the volumes' locks keep them so.
      try (FrozenFilesystems frozen = copier.freeze(holds)) {
        if (!gate.allFrozen()) {
          throw new StorageException(
              StorageException.Reason.ABORTED,
              "group snapshot "
                  + group.shownId()
                  + ": not every node froze its members in time, so this node copied none");
        }
        begun.forEach(snapshots::take);
      }
      List<Snapshot> members = begun.stream().map(snapshots::finish).toList();
      catalog.saveGroup(group.withState(RecordState.READY));
      LOG.info(
          "group snapshot {} of volumes {}: snapshots {}",
          groupId,
          group.sourceVolumeIds(),
          group.snapshotIds());
      return new GroupSnapshot(group.shownId(), name, shownIn(group, members), group.createdAt());
    } catch (RuntimeException e) {
      undo(group, begun);
      throw StorageException.wrap("cannot create group snapshot", e);
    }
  }

  /**
   * Removes what a failed create made: its members, then its record. What cannot be removed is
   * logged; the record then stays CREATING, naming the members left, and recovery removes them and
   * it at the next start.
   */
  private void undo(GroupSnapshotRecord group, List<SnapshotProvisioner.Pending> begun) {
    boolean membersGone = true;
    for (SnapshotProvisioner.Pending member : begun) {
      membersGone &= snapshots.abandon(member);
    }
    if (!membersGone) {
      return;
    }
    try {
      catalog.forgetGroup(group);
    } catch (RuntimeException cleanup) {
      LOG.error("cannot clean up failed group snapshot {}: {}", group.id(), cleanup.toString());
    }
  }

  /** The group, complete, or NOT_FOUND; INVALID_ARGUMENT when {@code snapshotIds} are not its. */
  GroupSnapshot get(String groupId, Collection<String> snapshotIds) {
    GroupSnapshotRecord group =
        catalog
            .group(partId(groupId))
            .filter(g -> g.state() == RecordState.READY)
            .orElseThrow(
                () ->
                    StorageException.notFound(
                        "group snapshot %s does not exist", Catalog.shown(groupId)));
    checkMembers(group, snapshotIds);
    return describe(group);
  }

  /**
   * Deletes the group and every member still there. An unknown ID succeeds; the record is marked
   * DELETING first, so that recovery finishes a delete a crash cut short.
   */
  void delete(String shownId, Collection<String> snapshotIds) {
    String groupId = partId(shownId);
    if (!Ids.isGroupId(groupId)) {
      return;
    }
    try (KeyedLocks.Held lock = locks.group(groupId)) {
      Optional<GroupSnapshotRecord> found = catalog.group(groupId);
      if (found.isEmpty()) {
        return;
      }
      GroupSnapshotRecord group = found.get();
      checkMembers(group, snapshotIds);
      catalog.saveGroup(group.withState(RecordState.DELETING));
      group.snapshotIds().forEach(snapshots::delete);
      catalog.forgetGroup(group);
      LOG.info("deleted group snapshot {} and its snapshots {}", groupId, group.snapshotIds());
    }
  }

  /** The ID this node keeps a group under: a group across nodes is kept under its part's ID. */
  static String partId(String groupId) {
    return SpanningGroupId.tryParse(groupId).map(SpanningGroupId::partId).orElse(groupId);
  }

  /** The members as the group shows them: naming the group by the ID it is known by. */
  private static List<Snapshot> shownIn(GroupSnapshotRecord group, List<Snapshot> members) {
    return members.stream()
        .map(
            m ->
                new Snapshot(
                    m.id(),
                    m.name(),
                    m.sourceVolumeId(),
                    m.sizeBytes(),
                    m.createdAt(),
                    m.readyToUse(),
                    group.shownId()))
        .toList();
  }

  /** The CO's list of members, when it sends one, must be the group's (in any order). */
  private static void checkMembers(GroupSnapshotRecord group, Collection<String> snapshotIds) {
    if (!snapshotIds.isEmpty()
        && !Set.copyOf(snapshotIds).equals(Set.copyOf(group.snapshotIds()))) {
      throw StorageException.invalid(
          "snapshot IDs do not name the members of group snapshot %s, which are %s",
          group.id(), group.snapshotIds());
    }
  }

  /**
   * The group as reported: every member in the order of its sources, a member deleted alone since
   * as a snapshot not ready to use.
   */
  private GroupSnapshot describe(GroupSnapshotRecord group) {
    List<Snapshot> members =
        IntStream.range(0, group.snapshotIds().size())
            .mapToObj(
                i ->
                    catalog
                        .snapshot(group.snapshotIds().get(i))
                        .filter(s -> s.state() == RecordState.READY)
                        .map(snapshots::describe)
                        .orElseGet(() -> gone(group, i)))
            .toList();
    return new GroupSnapshot(
        group.shownId(), group.name(), shownIn(group, members), group.createdAt());
  }

  private static Snapshot gone(GroupSnapshotRecord group, int member) {
    return new Snapshot(
        group.snapshotIds().get(member),
        "",
        group.sourceVolumeIds().get(member),
        0,
        group.createdAt(),
        false,
        group.shownId());
  }
}

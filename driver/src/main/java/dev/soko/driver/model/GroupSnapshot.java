package dev.soko.driver.model;

import java.time.Instant;
import java.util.List;

/**
 * A volume group snapshot: one snapshot of each of several volumes, of one node or of several (each
 * node's part), taken while all of their filesystems were frozen, so that together they hold one
 * instant.
 *
 * @param members one snapshot per source volume, in the order the create named the volumes; a
 *     member deleted on its own since is still listed, as not ready to use
 */
public record GroupSnapshot(String id, String name, List<Snapshot> members, Instant createdAt) {
  public GroupSnapshot {
    members = List.copyOf(members);
  }

  /** Ready once every member is: a restore from any of them then works. */
  public boolean readyToUse() {
    return !members.isEmpty() && members.stream().allMatch(Snapshot::readyToUse);
  }
}

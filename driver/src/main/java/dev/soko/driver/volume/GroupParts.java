package dev.soko.driver.volume;

import dev.soko.driver.model.GroupSnapshot;
import java.util.List;

/** A node's part of a group snapshot whose members are on several nodes. */
@FunctionalInterface
public interface GroupParts {
  /**
   * Takes this node's part of group {@code name}: its members {@code sourceVolumeIds} frozen, then
   * copied once {@code gate} says every node is frozen, kept under {@code id}'s part ID. A part of
   * that name taken already is answered as it is (its ID may be an earlier attempt's), without
   * freezing or asking the gate. Refusals are the single-node group's (FAILED_PRECONDITION for a
   * member nothing can freeze, NOT_FOUND, ...); a gate that says no is ABORTED, with nothing kept.
   */
  GroupSnapshot takeGroupPart(
      String name, SpanningGroupId id, List<String> sourceVolumeIds, FreezeGate gate);
}

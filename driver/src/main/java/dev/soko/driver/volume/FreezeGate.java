package dev.soko.driver.volume;

/**
 * What a group's part waits for between the freeze of its members and their copies. A group on one
 * node copies at once; a part of a group across nodes copies only once every node of the group has
 * frozen its members, so that all parts hold one instant.
 */
@FunctionalInterface
public interface FreezeGate {
  /** One node holds the whole group: its own freeze is the group's instant. */
  FreezeGate NONE = () -> true;

  /**
   * Called with this node's members frozen and nothing copied; answers whether to copy. False
   * (every node was not frozen in time, or the coordinator went away) thaws the members and drops
   * the part, leaving nothing behind.
   */
  boolean allFrozen();
}

package dev.soko.driver.pool;

import dev.soko.driver.config.PoolConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Whether a pool's node selector picks this node, with a Pod nodeSelector's meaning: every label of
 * the selector must be on the Node with the same value; an empty selector picks every node. Labels
 * that cannot be read pick no node for a pool with a selector: a pool meant for some nodes must not
 * fill a disk on the others because the API server was out of reach.
 */
public final class PoolSelector {
  private PoolSelector() {}

  /** {@link PoolVerdict#READY} when selected (the pool's other checks still apply). */
  public static PoolVerdict verdict(PoolConfig pool, NodeLabels.State node) {
    if (pool.nodeSelector().isEmpty()) {
      return PoolVerdict.READY;
    }
    if (!node.known()) {
      return PoolVerdict.notSelected(
          "the pool has a node selector and this node's labels are unknown: "
              + node.unknownReason());
    }
    List<String> misses = new ArrayList<>();
    for (Map.Entry<String, String> wanted : new TreeMap<>(pool.nodeSelector()).entrySet()) {
      String actual = node.labels().get(wanted.getKey());
      if (actual == null) {
        misses.add("no label " + wanted.getKey());
      } else if (!actual.equals(wanted.getValue())) {
        misses.add(
            "label " + wanted.getKey() + " is '" + actual + "', not '" + wanted.getValue() + "'");
      }
    }
    return misses.isEmpty()
        ? PoolVerdict.READY
        : PoolVerdict.notSelected(
            "this node does not match the pool's node selector: " + String.join("; ", misses));
  }
}

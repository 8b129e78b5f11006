package dev.soko.operator.reconcile.status;

import dev.soko.api.v1alpha1.PoolStatus;
import java.util.List;

/**
 * The Degraded message for refused pools: how many node/pool pairs, up to {@link #NAMED} of them
 * with the driver's reason (cut to {@link #MAX_REASON} characters), and "and N more".
 */
final class PoolRefusals {
  static final String REASON = "PoolRefused";
  static final int NAMED = 3;
  static final int MAX_REASON = 200;

  private PoolRefusals() {}

  static String describe(List<PoolStatus> refused) {
    StringBuilder sb =
        new StringBuilder()
            .append(refused.size())
            .append(refused.size() == 1 ? " pool refused on its node: " : " pools refused: ");
    int shown = Math.min(NAMED, refused.size());
    for (int i = 0; i < shown; i++) {
      PoolStatus p = refused.get(i);
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(p.node()).append('/').append(p.pool());
      if (p.message() != null) {
        sb.append(" (").append(cut(p.message())).append(')');
      }
    }
    if (refused.size() > shown) {
      sb.append(" and ").append(refused.size() - shown).append(" more");
    }
    return sb.append("; no new volumes go there, existing ones keep working").toString();
  }

  private static String cut(String text) {
    return text.length() <= MAX_REASON ? text : text.substring(0, MAX_REASON - 1) + "…";
  }
}

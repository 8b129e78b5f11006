package dev.soko.driver.attribute;

import java.nio.file.Path;
import java.util.Map;

/**
 * What a kind of attribute does on the node. Each method gets the kind's own values only, as kept
 * in the volume's record ({@code values} is empty when the volume has none of them). A failure that
 * must fail the CSI call is an {@link AttributeException}; an effect that is retried by itself (IO
 * limits, applied again every period) logs and returns.
 */
public interface AttributeEffects {
  /**
   * The volume is about to be staged, nothing is attached or mounted yet: refuse here what staging
   * would need and lacks (a missing secret), so that a refused stage changes nothing.
   */
  default void staging(String volumeId, Map<String, String> values, NodeSecrets secrets) {}

  /** The volume was staged at {@code stagingPath}. */
  default void staged(String volumeId, Path stagingPath, Map<String, String> values) {}

  /**
   * The volume was staged at {@code stagingPath}, with the node-stage {@code secrets}. A failure
   * here makes the engine take a staging mount this stage made down again.
   */
  default void staged(
      String volumeId, Path stagingPath, Map<String, String> values, NodeSecrets secrets) {
    staged(volumeId, stagingPath, values);
  }

  /** The volume is about to be unstaged from {@code stagingPath}, which is still mounted. */
  default void unstaging(String volumeId, Path stagingPath, Map<String, String> values) {}

  /** The volume was unstaged from {@code stagingPath}. */
  default void unstaged(String volumeId, Path stagingPath) {}

  /**
   * The volume was published to a pod; also called for every publication the mount table shows when
   * the effects start and when a pool opens late, since a restarted driver keeps none in memory.
   */
  default void published(Publication publication, Map<String, String> values) {}

  /** The publication at {@code target} is gone. */
  default void unpublished(String volumeId, Path target) {}

  /**
   * ModifyVolume replaced the volume's mutable values (and kept them); {@code values} are the
   * kind's values now.
   */
  default void changed(String volumeId, Map<String, String> values) {}
}

package dev.soko.driver.volume;

import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stage, publish and their reverses, with each volume's attributes around them: the attributes are
 * asked before a stage and told after each step, and a stage whose attributes refuse it takes down
 * the mount it made. {@link NodeVolumes} does the mounting, {@link VolumeAttributes} the
 * attributes; every failure leaves as a {@link StorageException} ({@link Failures}).
 */
final class NodeLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(NodeLifecycle.class);

  private final NodeVolumes node;
  private final VolumeAttributes attributes;

  NodeLifecycle(NodeVolumes node, VolumeAttributes attributes) {
    this.node = node;
    this.attributes = attributes;
  }

  void stage(StageRequest request) {
    Failures.mapped(() -> attributes.staging(request));
    boolean mountedBefore = node.mountedAt(request.stagingPath());
    Failures.mapped(() -> node.stage(request, attributes.form(request.volumeId())));
    try {
      Failures.mapped(() -> attributes.staged(request));
    } catch (RuntimeException e) {
      if (!mountedBefore) {
        undoStage(request);
      }
      throw e;
    }
  }

  /** Takes down a staging mount this stage made, after its attributes refused it. */
  private void undoStage(StageRequest request) {
    try {
      node.unstage(request.volumeId(), request.stagingPath());
    } catch (RuntimeException undo) {
      LOG.warn(
          "volume {}: cannot unstage it after its attributes refused the stage: {}",
          request.volumeId(),
          undo.toString());
    }
  }

  void unstage(String volumeId, Path stagingPath) {
    Failures.mapped(() -> attributes.unstaging(volumeId, stagingPath));
    Failures.mapped(() -> node.unstage(volumeId, stagingPath));
    Failures.mapped(() -> attributes.unstaged(volumeId, stagingPath));
  }

  void publish(PublishRequest request) {
    Failures.mapped(() -> node.publish(request, attributes.form(request.volumeId())));
    Failures.mapped(() -> attributes.published(request));
  }

  void unpublish(String volumeId, Path targetPath) {
    Failures.mapped(() -> node.unpublish(volumeId, targetPath));
    Failures.mapped(() -> attributes.unpublished(volumeId, targetPath));
  }
}

package dev.soko.driver.handoff;

import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeManager;

/**
 * The node's handler: a ModifyVolume request replaces the volume's mutable parameters in this
 * node's engine, which keeps them in the volume's record before it answers (so an Applied request
 * survives a restart) and applies them to the pods the volume is published to. Bad parameters and a
 * volume this node does not hold are refused; anything else failed, and is retried.
 */
public final class LocalModify implements NodeRequestHandler {
  private final VolumeManager volumes;

  public LocalModify(VolumeManager volumes) {
    this.volumes = volumes;
  }

  @Override
  public Outcome handle(NodeRequest request) {
    if (!RemoteModify.OPERATION.equals(request.operation())) {
      return Outcome.refused("this driver does not know the operation " + request.operation());
    }
    try {
      volumes.modifyVolume(request.volumeId(), request.parameters());
      return Outcome.applied();
    } catch (StorageException e) {
      return switch (e.reason()) {
        case INVALID_ARGUMENT, NOT_FOUND -> Outcome.refused(e.getMessage());
        default -> Outcome.failed(e.getMessage());
      };
    }
  }
}

package dev.soko.driver.handoff;

import dev.soko.driver.csi.ClusterControllerService;
import dev.soko.driver.volume.StorageException;
import java.util.Map;

/**
 * The controller's ControllerModifyVolume: finds the volume's node from its PersistentVolume and
 * asks it through a NodeRequest, answering as the CSI call must (see {@link
 * ClusterControllerService.VolumeModifier}).
 */
public final class RemoteModify implements ClusterControllerService.VolumeModifier {
  public static final String OPERATION = "ModifyVolume";

  private final VolumeOwners owners;
  private final NodeRequestClient client;

  public RemoteModify(VolumeOwners owners, NodeRequestClient client) {
    this.owners = owners;
    this.client = client;
  }

  @Override
  public void modify(String volumeId, Map<String, String> mutableParameters) {
    VolumeOwners.Owner owner = owners.require(volumeId);
    NodeRequestClient.Answer answer;
    try {
      answer = client.request(owner, volumeId, OPERATION, mutableParameters);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(StorageException.Reason.UNAVAILABLE, "interrupted");
    }
    switch (answer.kind()) {
      case APPLIED -> {}
      case REFUSED -> throw StorageException.invalid("%s", answer.message());
      default -> throw new StorageException(StorageException.Reason.UNAVAILABLE, answer.message());
    }
  }
}

package dev.soko.driver.csi;

import com.google.protobuf.Int64Value;
import csi.v1.Csi;
import dev.soko.driver.model.PoolCapacity;
import dev.soko.driver.volume.VolumeManager;
import java.util.Optional;

/**
 * GetCapacity for this node. The external-provisioner asks once per StorageClass and topology
 * segment and publishes the answer as a CSIStorageCapacity object for the scheduler; a request that
 * this node can never satisfy (other node, unknown pool, unsupported capability or filesystem)
 * answers 0 rather than an error, so the scheduler simply looks elsewhere.
 */
final class CapacityQuery {
  private final VolumeManager volumes;
  private final Topology topology;
  private final PoolFsTypes pools;

  CapacityQuery(VolumeManager volumes, Topology topology, PoolFsTypes pools) {
    this.volumes = volumes;
    this.topology = topology;
    this.pools = pools;
  }

  Csi.GetCapacityResponse answer(Csi.GetCapacityRequest request) {
    Parameters parameters =
        Parameters.parse(request.getParametersMap(), volumes.attributeParameters());
    String pool = parameters.pool().isEmpty() ? pools.defaultPool() : parameters.pool();
    String fsType = parameters.fsType();
    boolean servable =
        !request.hasAccessibleTopology() || topology.matches(request.getAccessibleTopology());
    for (Csi.VolumeCapability capability : request.getVolumeCapabilitiesList()) {
      if (Capabilities.problem(capability) != null) {
        servable = false;
      } else if (capability.hasBlock()) {
        servable &= pools.allowsBlock(pool);
      } else if (capability.hasMount() && !capability.getMount().getFsType().isEmpty()) {
        String requested = capability.getMount().getFsType();
        servable &= fsType.isEmpty() || fsType.equals(requested);
        fsType = requested;
      }
    }
    servable &= pools.allows(pool, fsType);
    Optional<PoolCapacity> found =
        servable
            ? volumes.capacity().stream().filter(c -> c.pool().equals(pool)).findFirst()
            : Optional.empty();
    Csi.GetCapacityResponse.Builder response = Csi.GetCapacityResponse.newBuilder();
    found.ifPresentOrElse(
        c ->
            response
                .setAvailableCapacity(c.availableBytes())
                .setMaximumVolumeSize(Int64Value.of(c.maximumVolumeBytes())),
        () -> response.setAvailableCapacity(0).setMaximumVolumeSize(Int64Value.of(0)));
    return response.build();
  }
}

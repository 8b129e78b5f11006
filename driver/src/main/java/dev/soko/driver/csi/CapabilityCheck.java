package dev.soko.driver.csi;

import csi.v1.Csi;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.Volume;
import dev.soko.driver.volume.StorageException;
import java.util.List;

/**
 * ValidateVolumeCapabilities: a capability this volume cannot serve is not an error but an
 * unconfirmed answer with a message, as the spec asks; only malformed requests are errors.
 */
final class CapabilityCheck {
  private CapabilityCheck() {}

  /** {@code attributeKeys}: the StorageClass parameters per-volume attributes own. */
  static Csi.ValidateVolumeCapabilitiesResponse validate(
      Volume volume, Csi.ValidateVolumeCapabilitiesRequest request, List<String> attributeKeys) {
    String problem = parameterProblem(volume, request, attributeKeys);
    for (Csi.VolumeCapability capability : request.getVolumeCapabilitiesList()) {
      if (problem == null) {
        problem = problem(volume, capability);
      }
    }
    if (problem != null) {
      return Csi.ValidateVolumeCapabilitiesResponse.newBuilder().setMessage(problem).build();
    }
    return Csi.ValidateVolumeCapabilitiesResponse.newBuilder()
        .setConfirmed(
            Csi.ValidateVolumeCapabilitiesResponse.Confirmed.newBuilder()
                .putAllVolumeContext(request.getVolumeContextMap())
                .addAllVolumeCapabilities(request.getVolumeCapabilitiesList())
                .putAllParameters(request.getParametersMap()))
        .build();
  }

  private static String parameterProblem(
      Volume volume, Csi.ValidateVolumeCapabilitiesRequest request, List<String> attributeKeys) {
    if (request.getMutableParamsCount() > 0) {
      return "mutable_parameters are not supported";
    }
    try {
      Parameters parameters = Parameters.parse(request.getParametersMap(), attributeKeys);
      if (!parameters.pool().isEmpty() && !parameters.pool().equals(volume.pool())) {
        return "the volume is not in pool " + Capabilities.shorten(parameters.pool());
      }
      return null;
    } catch (StorageException e) {
      return e.getMessage();
    }
  }

  private static String problem(Volume volume, Csi.VolumeCapability capability) {
    String problem = Capabilities.problem(capability);
    if (problem != null) {
      return problem;
    }
    if (capability.hasBlock() != (volume.accessType() == AccessType.BLOCK)) {
      return "the volume was created for "
          + (volume.accessType() == AccessType.BLOCK ? "block" : "mount")
          + " access";
    }
    String fsType = capability.hasMount() ? capability.getMount().getFsType() : "";
    if (!fsType.isEmpty() && !fsType.equals(volume.fsType())) {
      return "the volume has filesystem " + volume.fsType() + ", not " + fsType;
    }
    return null;
  }
}

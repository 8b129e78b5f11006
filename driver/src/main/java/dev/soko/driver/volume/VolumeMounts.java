package dev.soko.driver.volume;

import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;

/**
 * Stage, publish and their reverses for one kind of volume ({@link BlockMounts}, {@link
 * DirectoryMounts}). Every call is idempotent: it looks at what is really mounted and does only
 * what is missing; {@link NodeVolumes} checks the request and holds the volume's lock around it,
 * and {@code location} is the volume's storage.
 */
interface VolumeMounts {

  void stage(VolumeRecord record, Path location, Path staging, List<String> flags, VolumeForm form);

  void unstage(VolumeRecord record, Path location, Path staging);

  void publish(
      VolumeRecord record,
      Path location,
      Path staging,
      Path target,
      List<String> flags,
      boolean readOnly,
      VolumeForm form);

  void unpublish(VolumeRecord record, Path location, Path target);
}

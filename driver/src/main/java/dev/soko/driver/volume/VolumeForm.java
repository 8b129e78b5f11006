package dev.soko.driver.volume;

import java.util.List;
import java.util.Optional;

/**
 * What a volume's attributes ask of its filesystem and of what pods see, as the attribute registry
 * says ({@link VolumeAttributes#form}); {@link #PLAIN} for a volume with none of those, which is
 * made and presented as ever.
 *
 * @param filesystemFeatures the features its filesystem is made with (ext4's {@code encrypt})
 * @param presentedDirectory the directory of its filesystem that pods see instead of the root
 */
record VolumeForm(List<String> filesystemFeatures, Optional<String> presentedDirectory) {
  static final VolumeForm PLAIN = new VolumeForm(List.of(), Optional.empty());

  VolumeForm {
    filesystemFeatures = List.copyOf(filesystemFeatures);
  }

  /** What a staged filesystem volume at {@code staging} shows its pods. */
  java.nio.file.Path presented(java.nio.file.Path staging) {
    return presentedDirectory.map(staging::resolve).orElse(staging);
  }
}

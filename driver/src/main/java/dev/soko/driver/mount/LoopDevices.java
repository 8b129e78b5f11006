package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Loop devices: how image files become block devices. */
public interface LoopDevices {

  /**
   * Attaches a new loop device to {@code image}; returns its path, e.g. {@code /dev/loop3}. A
   * {@code directIoBlockSize} above 0 asks for direct I/O with that logical block size (the kernel
   * stays buffered where the backing file cannot do it); 0 means buffered, 512-byte blocks.
   */
  String attach(Path image, int directIoBlockSize);

  /** A buffered device (512-byte blocks), as every volume had before direct I/O. */
  default String attach(Path image) {
    return attach(image, 0);
  }

  /** Every attached loop device on the host, its backing file as the kernel names it. Cheap. */
  List<LoopDevice> list();

  /**
   * Which file backs {@code device}, as the kernel holds it (not by path); empty when the device is
   * no longer attached.
   */
  Optional<FileId> backingFileId(String device);

  /** The loop devices attached to {@code image} (normally zero or one). */
  default List<String> devicesFor(Path image) {
    return backedBy(list(), image, false);
  }

  /**
   * Like {@link #devicesFor}, and also, when {@code image} is gone, the devices still holding it
   * after it was deleted under them: their mounts are still the image's.
   */
  default List<String> devicesHolding(Path image) {
    return backedBy(list(), image, true);
  }

  /**
   * Of {@code listed}, the devices backed by {@code file}: the one test of which file a loop device
   * holds. The path the kernel shows cannot tell: a device attached through a mount that has gone
   * since (the pool bound into a driver container that was killed) is named relative to that mount,
   * {@code /images/vol-1.img} for {@code /var/lib/soko/pools/p/images/vol-1.img}. So a file that
   * exists is matched by identity ({@link FileId}), asked of a device only when the name the kernel
   * shows ends in the file's own name, which it always does: on the stage and unstage path that is
   * nothing more when the image is not attached, else one stat and one device opened.
   *
   * <p>A device whose file was deleted under it never matches a file that exists, even one that now
   * has the same inode number. With {@code deletedToo}, a file that no longer exists is matched
   * with the devices whose deleted file the kernel names by exactly its path (only a device
   * attached in this mount namespace can be found so).
   */
  default List<String> backedBy(List<LoopDevice> listed, Path file, boolean deletedToo) {
    Path name = file.getFileName();
    List<LoopDevice> named =
        listed.stream()
            .filter(l -> name != null && name.equals(l.backingFile().getFileName()))
            .toList();
    if (named.isEmpty()) {
      return List.of();
    }
    Optional<FileId> id = FileId.of(file);
    return named.stream()
        .filter(
            l ->
                id.isPresent()
                    ? !l.backingFileDeleted() && backingFileId(l.device()).equals(id)
                    : deletedToo && l.backingFileDeleted() && l.backingFile().equals(file))
        .map(LoopDevice::device)
        .toList();
  }

  /** Makes the device pick up its backing file's new size. */
  void refreshSize(String device);

  void detach(String device);
}

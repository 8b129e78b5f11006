package dev.soko.driver.backend.btrfs;

import dev.soko.driver.btrfs.Btrfs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The subvolumes a pool deleted whose qgroup may outlive them, until it is gone. A delete does not
 * wait for the kernel's cleaner (seconds, for a large volume); until the cleaner has dropped the
 * subvolume its qgroup is busy, and a kernel before Linux 6.x keeps it even after, where every
 * deleted volume would leave one behind and a later subvolume given the same ID after a remount
 * would inherit its numbers. So each delete leaves an empty file named by the subvolume's ID in the
 * pool's {@code .soko/deleted-subvolumes}, and {@link #sweep} destroys the qgroup once the root
 * tree no longer holds the subvolume, live or dead. Only those qgroups: never one the pool did not
 * delete the subvolume of (an admin may have made it ahead for a subvolume to come), and never one
 * whose subvolume exists.
 *
 * <p>The file is not flushed: a power cut that loses it leaves one qgroup on an old kernel, and a
 * 6.x kernel removes it anyway; a flush would cost every delete a journal commit.
 */
final class DeletedSubvolumes {
  private static final Logger LOG = LoggerFactory.getLogger(DeletedSubvolumes.class);

  private final Btrfs btrfs;

  DeletedSubvolumes(Btrfs btrfs) {
    this.btrfs = btrfs;
  }

  static Path markers(Path poolDir) {
    return poolDir.resolve(".soko").resolve("deleted-subvolumes");
  }

  /** Remembers that the pool in {@code poolDir} deleted subvolume {@code id}. */
  void remember(Path poolDir, long id) {
    Path dir = markers(poolDir);
    try {
      Files.createDirectories(dir);
      Files.write(dir.resolve(Long.toString(id)), new byte[0]);
    } catch (IOException e) {
      // The subvolume is deleted: failing the request for this would make a retry find nothing.
      LOG.warn("cannot remember deleted subvolume {} (its qgroup may stay): {}", id, e.toString());
    }
  }

  /**
   * Destroys the qgroups of the deleted subvolumes the cleaner has dropped and forgets those the
   * kernel removed itself; keeps the rest for the next sweep.
   *
   * @return how many qgroups it destroyed
   */
  int sweep(Path poolDir) {
    int destroyed = 0;
    for (Path marker : list(markers(poolDir))) {
      long id;
      try {
        id = Long.parseLong(marker.getFileName().toString());
      } catch (NumberFormatException e) {
        continue; // not one of ours
      }
      try {
        if (!btrfs.subvolumeDropped(poolDir, id)) {
          continue; // the cleaner is still at it
        }
        switch (btrfs.destroyQgroup(poolDir, id)) {
          case DESTROYED -> {
            destroyed++;
            Files.deleteIfExists(marker);
          }
          case ABSENT -> Files.deleteIfExists(marker);
          case BUSY -> {
            // dropped from the root tree a moment ago: the next sweep
          }
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("cannot clean up the qgroup of deleted subvolume {}: {}", id, e.toString());
      }
    }
    if (destroyed > 0) {
      LOG.info("destroyed {} qgroups of deleted subvolumes in {}", destroyed, poolDir);
    }
    return destroyed;
  }

  /** The marker files, in no order; none when the directory is not there yet. */
  static List<Path> list(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files.toList();
    } catch (NoSuchFileException e) {
      return List.of();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
  }
}

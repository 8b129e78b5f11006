package dev.soko.driver.backend.imagefile;

import dev.soko.driver.backend.BlockMaps;
import dev.soko.driver.extent.FileExtents;
import dev.soko.driver.extent.RangeCursor;
import dev.soko.driver.extent.Ranges;
import dev.soko.driver.sys.Syscalls;
import java.nio.file.Path;

/**
 * An image file's blocks are its extents: FIEMAP lists them, and two reflink copies in one pool
 * share every extent neither has written since (the pool's filesystem moves a written block to a
 * new place), so comparing where each byte lives finds exactly the written blocks.
 */
final class ImageBlockMaps implements BlockMaps {
  private final Syscalls syscalls;

  ImageBlockMaps(Syscalls syscalls) {
    this.syscalls = syscalls;
  }

  @Override
  public RangeCursor allocated(Path location, long from, long end) {
    return Ranges.allocated(FileExtents.open(syscalls, location, from, end), from, end);
  }

  @Override
  public RangeCursor changed(Path base, Path target, long from, long end) {
    FileExtents before = FileExtents.open(syscalls, base, from, end);
    try {
      return Ranges.changed(before, FileExtents.open(syscalls, target, from, end), from, end);
    } catch (RuntimeException e) {
      before.close();
      throw e;
    }
  }
}

package dev.soko.driver.volume;

import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.extent.RangeCursor;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The block metadata of one request, read a batch at a time. Between batches it checks that the
 * snapshots it reads still exist: one deleted while it is read ends the stream with NOT_FOUND, so
 * that a client never takes what it received for the whole answer.
 */
public final class BlockStream implements AutoCloseable {
  private final long capacityBytes;
  private final RangeCursor ranges;
  private final Supplier<Optional<String>> gone;

  /**
   * @param capacityBytes the size of the device the ranges are of
   * @param ranges the ranges; a failure to read them is a StorageException already
   * @param gone why the snapshots read can no longer be answered for (one was deleted), or empty
   */
  public BlockStream(long capacityBytes, RangeCursor ranges, Supplier<Optional<String>> gone) {
    this.capacityBytes = capacityBytes;
    this.ranges = ranges;
    this.gone = gone;
  }

  public long capacityBytes() {
    return capacityBytes;
  }

  /** Up to {@code max} next ranges; empty at the end. */
  public List<ByteRange> next(int max) {
    List<ByteRange> batch = new ArrayList<>(Math.min(max, 1024));
    while (batch.size() < max) {
      Optional<ByteRange> range = ranges.next();
      if (range.isEmpty()) {
        break;
      }
      batch.add(range.get());
    }
    checkPresent();
    return batch;
  }

  /**
   * Throws NOT_FOUND when a snapshot read was deleted since the stream was opened: a reader of the
   * ranges' bytes asks between its reads, so that bytes of a deleted snapshot never pass as whole.
   */
  public void checkPresent() {
    gone.get()
        .ifPresent(
            why -> {
              throw StorageException.notFound("%s; the ranges sent so far are not complete", why);
            });
  }

  @Override
  public void close() {
    ranges.close();
  }
}

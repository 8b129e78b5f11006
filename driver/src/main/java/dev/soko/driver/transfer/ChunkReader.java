package dev.soko.driver.transfer;

import com.google.protobuf.UnsafeByteOperations;
import dev.soko.data.v1.DataProto.Chunk;
import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.List;
import java.util.Optional;

/**
 * The chunks of an image's allocated ranges (a snapshot's, or a volume's read copy), read as they
 * are asked for: at most {@link #MAX_CHUNK} bytes each, never crossing a hole, each with its
 * CRC32C. Before every chunk it asks whether the snapshot still exists, so that a snapshot deleted
 * while it is read ends the stream with NOT_FOUND (its open image would still read fine).
 */
final class ChunkReader implements AutoCloseable {
  static final int MAX_CHUNK = 1 << 20;

  private final String image;
  private final BlockStream ranges;
  private final FileChannel file;
  private ByteRange range;
  private long position;

  /**
   * @param image what is read, for messages ("snapshot X", "the read copy of volume X")
   */
  ChunkReader(String image, BlockStream ranges, FileChannel file) {
    this.image = image;
    this.ranges = ranges;
    this.file = file;
  }

  /** The next chunk, or empty when every allocated range was read. */
  Optional<Chunk> next() {
    while (range == null || position >= range.end()) {
      List<ByteRange> next = ranges.next(1);
      if (next.isEmpty()) {
        return Optional.empty();
      }
      range = next.get(0);
      position = range.offset();
    }
    ranges.checkPresent();
    int length = (int) Math.min(MAX_CHUNK, range.end() - position);
    byte[] data = read(position, length);
    Chunk chunk =
        Chunk.newBuilder()
            .setOffset(position)
            .setData(UnsafeByteOperations.unsafeWrap(data))
            .setCrc32C(ChunkRules.crc32c(data))
            .build();
    position += length;
    return Optional.of(chunk);
  }

  private byte[] read(long offset, int length) {
    byte[] data = new byte[length];
    ByteBuffer buffer = ByteBuffer.wrap(data);
    try {
      while (buffer.hasRemaining()) {
        int read = file.read(buffer, offset + buffer.position());
        if (read < 0) {
          throw new StorageException(
              StorageException.Reason.INTERNAL,
              "the image of "
                  + image
                  + " ended at "
                  + (offset + buffer.position())
                  + ", inside a range its extent map lists as data");
        }
      }
    } catch (IOException e) {
      ranges.checkPresent();
      throw StorageException.internal(
          "cannot read the image of " + image + ": " + e.getClass().getSimpleName(), e);
    }
    return data;
  }

  @Override
  public void close() {
    try {
      ranges.close();
    } finally {
      try {
        file.close();
      } catch (IOException e) {
        // Opened read-only: nothing to lose.
      }
    }
  }
}

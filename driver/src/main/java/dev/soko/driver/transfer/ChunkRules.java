package dev.soko.driver.transfer;

import com.google.protobuf.ByteString;
import dev.soko.driver.volume.StorageException;
import java.nio.ByteBuffer;
import java.util.function.Function;
import java.util.zip.CRC32C;

/**
 * The rules every chunk on the data path follows, of an image or of a tree's file alike: it holds 1
 * to {@link ChunkReader#MAX_CHUNK} bytes, comes in order inside what it belongs to, and carries the
 * CRC32C of its data, which the receiver computes again.
 */
final class ChunkRules {
  private ChunkRules() {}

  /** The CRC32C a chunk of {@code data} is sent with. */
  static int crc32c(byte[] data) {
    return crc32c(ByteBuffer.wrap(data));
  }

  private static int crc32c(ByteBuffer data) {
    CRC32C crc = new CRC32C();
    crc.update(data);
    return (int) crc.getValue();
  }

  /**
   * Throws, built by {@code failure} from why, for a chunk that arrived and must not be written.
   *
   * @param next where the previous chunk ended (or the stream started)
   * @param size the size of what the chunk belongs to, {@code whose} ("the snapshot's", "its
   *     file's")
   * @param where what follows "the chunk at offset N" to name it ("", " of file X")
   */
  static void check(
      long offset,
      ByteString data,
      int sentCrc,
      long next,
      long size,
      String whose,
      String where,
      Function<String, StorageException> failure) {
    int length = data.size();
    if (length == 0 || length > ChunkReader.MAX_CHUNK) {
      throw failure.apply("a chunk at offset " + offset + " holds " + length + " bytes");
    }
    if (offset < next || offset > size - length) {
      throw failure.apply(
          "a chunk of "
              + length
              + " bytes at offset "
              + offset
              + " is out of order or outside "
              + whose
              + " "
              + size
              + " bytes");
    }
    int receivedCrc = crc32c(data.asReadOnlyByteBuffer());
    if (receivedCrc != sentCrc) {
      throw failure.apply(
          String.format(
              "the chunk at offset %d%s failed its CRC32C check (sent %08x, received data has"
                  + " %08x): it was corrupted on the way",
              offset, where, sentCrc, receivedCrc));
    }
  }
}

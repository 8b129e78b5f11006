package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.Chunk;
import dev.soko.data.v1.DataProto.End;
import dev.soko.driver.volume.StorageException;

/**
 * What a reader of a Read stream accepts: chunks in increasing order inside the snapshot, each
 * matching its CRC32C, then one End whose size and count match what was described and received. A
 * stream is complete only with that End; everything else is a failure that names the snapshot and
 * its source, never a short copy. Pure: the copy writes what this passed.
 */
final class ChunkCheck {
  private final String source;
  private final long sizeBytes;
  private long next;
  private long chunks;
  private boolean ended;

  /**
   * @param source the snapshot and where it is read from, for messages ("snapshot X of node N at
   *     E")
   * @param sizeBytes the snapshot's size as described
   * @param startingOffset where the read started
   */
  ChunkCheck(String source, long sizeBytes, long startingOffset) {
    this.source = source;
    this.sizeBytes = sizeBytes;
    this.next = startingOffset;
  }

  /** Checks {@code chunk} before it is written; throws INTERNAL for one that must not be. */
  void accept(Chunk chunk) {
    if (ended) {
      throw corrupt("a chunk came after the end of the stream");
    }
    long offset = chunk.getOffset();
    ChunkRules.check(
        offset,
        chunk.getData(),
        chunk.getCrc32C(),
        next,
        sizeBytes,
        "the snapshot's",
        "",
        this::corrupt);
    next = offset + chunk.getData().size();
    chunks++;
  }

  /** Checks the stream's End against what was described and received. */
  void end(End end) {
    if (ended) {
      throw corrupt("the stream ended twice");
    }
    if (end.getSizeBytes() != sizeBytes) {
      throw corrupt(
          "the stream's end gives " + end.getSizeBytes() + " bytes, the description " + sizeBytes);
    }
    if (end.getChunks() != chunks) {
      throw corrupt(
          "the stream's end counts " + end.getChunks() + " chunks sent, " + chunks + " arrived");
    }
    ended = true;
  }

  /** Once the stream closed without an error: throws unless its End arrived. */
  void complete() {
    if (!ended) {
      throw corrupt(
          "the stream closed after " + chunks + " chunks without its end: the copy is incomplete");
    }
  }

  long chunks() {
    return chunks;
  }

  /** Where the bytes that passed end: a cut stream is read again from here. */
  long verifiedUpTo() {
    return next;
  }

  private StorageException corrupt(String what) {
    return new StorageException(
        StorageException.Reason.INTERNAL, "copy of " + source + " failed: " + what);
  }
}

package dev.soko.driver.extent;

import java.util.Optional;

/**
 * A cursor whose ranges come from {@link #nextPiece} in increasing order and leave here merged:
 * pieces that touch become one range.
 */
abstract class MergingCursor implements RangeCursor {
  private ByteRange pending;

  /** The next piece, starting at or after the end of the one before, or empty at the end. */
  abstract Optional<ByteRange> nextPiece();

  @Override
  public final Optional<ByteRange> next() {
    for (Optional<ByteRange> piece = nextPiece(); piece.isPresent(); piece = nextPiece()) {
      ByteRange p = piece.get();
      if (pending == null) {
        pending = p;
      } else if (pending.end() == p.offset()) {
        pending = new ByteRange(pending.offset(), pending.length() + p.length());
      } else {
        ByteRange done = pending;
        pending = p;
        return Optional.of(done);
      }
    }
    ByteRange last = pending;
    pending = null;
    return Optional.ofNullable(last);
  }
}

package dev.soko.driver.extent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Block metadata from extent maps, on maps written out by hand. */
class RangesTest {
  private static final long K = 4096;

  /** Extents in a list, and whether they were closed. */
  private static final class Listed implements ExtentSource {
    private final Deque<Extent> extents;
    boolean closed;

    Listed(Extent... extents) {
      this.extents = new ArrayDeque<>(List.of(extents));
    }

    @Override
    public Optional<Extent> next() {
      return Optional.ofNullable(extents.poll());
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  private static Extent data(long logicalBlock, long physicalBlock, long blocks) {
    return new Extent(logicalBlock * K, physicalBlock * K, blocks * K, 0);
  }

  private static Extent flagged(long logicalBlock, long physicalBlock, long blocks, int flags) {
    return new Extent(logicalBlock * K, physicalBlock * K, blocks * K, flags);
  }

  private static ByteRange blocks(long first, long count) {
    return new ByteRange(first * K, count * K);
  }

  private static List<ByteRange> all(RangeCursor cursor) {
    List<ByteRange> ranges = new ArrayList<>();
    for (Optional<ByteRange> r = cursor.next(); r.isPresent(); r = cursor.next()) {
      ranges.add(r.get());
    }
    cursor.close();
    return ranges;
  }

  @Test
  void allocatedRangesAreTheExtentsThatHoldDataWithTouchingOnesMerged() {
    Listed extents =
        new Listed(
            data(0, 100, 2),
            data(2, 500, 1), // touches the one before: one range
            flagged(8, 900, 4, Extent.UNWRITTEN), // reads as zeros: not data
            data(16, 300, 4));

    assertThat(all(Ranges.allocated(extents, 0, 64 * K)))
        .containsExactly(blocks(0, 3), blocks(16, 4));
    assertThat(extents.closed).isTrue();
  }

  @Test
  void allocatedRangesStartAtTheStartingOffsetAndStopAtTheEnd() {
    List<ByteRange> ranges =
        all(Ranges.allocated(new Listed(data(0, 100, 8), data(10, 300, 8)), 5 * K, 12 * K));

    assertThat(ranges).containsExactly(blocks(5, 3), blocks(10, 2));
  }

  @Test
  void anEmptyFileHasNoAllocatedRanges() {
    assertThat(all(Ranges.allocated(new Listed(), 0, 64 * K))).isEmpty();
  }

  @Test
  void twoReflinkCopiesDifferExactlyWhereOneWasWritten() {
    // The base shares one extent of 16 blocks; the target was written at blocks 3 and 9-10, which
    // moved to new places, so its map splits the shared extent around them.
    Listed base = new Listed(data(0, 1000, 16));
    Listed target =
        new Listed(
            data(0, 1000, 3),
            data(3, 5000, 1),
            data(4, 1004, 5),
            data(9, 6000, 2),
            data(11, 1011, 5));

    assertThat(all(Ranges.changed(base, target, 0, 16 * K)))
        .containsExactly(blocks(3, 1), blocks(9, 2));
    assertThat(base.closed).isTrue();
    assertThat(target.closed).isTrue();
  }

  @Test
  void dataWrittenIntoAHoleAndDataPunchedOutAreBothChanges() {
    Listed base = new Listed(data(0, 1000, 4), data(20, 2000, 2));
    Listed target = new Listed(data(0, 1000, 4), data(8, 3000, 2)); // blocks 20-21 discarded

    assertThat(all(Ranges.changed(base, target, 0, 32 * K)))
        .containsExactly(blocks(8, 2), blocks(20, 2));
  }

  @Test
  void holesInBothAndUnwrittenExtentsAreTheSame() {
    Listed base = new Listed(flagged(0, 1000, 4, Extent.UNWRITTEN));
    Listed target = new Listed();

    assertThat(all(Ranges.changed(base, target, 0, 8 * K))).isEmpty();
  }

  @Test
  void copiesThatShareNothingDifferWhereverEitherHoldsData() {
    // A sparse copy (a pool without reflink): the same content at other places.
    Listed base = new Listed(data(0, 1000, 4), data(10, 1100, 2));
    Listed target = new Listed(data(0, 7000, 4), data(10, 7100, 2));

    assertThat(all(Ranges.changed(base, target, 0, 16 * K)))
        .containsExactly(blocks(0, 4), blocks(10, 2));
  }

  @Test
  void dataWhosePlaceIsUnknownIsAlwaysAChange() {
    Listed base = new Listed(flagged(0, 1000, 2, Extent.ENCODED));
    Listed target = new Listed(flagged(0, 1000, 2, Extent.ENCODED));

    assertThat(all(Ranges.changed(base, target, 0, 2 * K))).containsExactly(blocks(0, 2));
  }

  @Test
  void aTargetLargerThanItsBaseHasChangedWhereItsGrownPartHoldsData() {
    Listed base = new Listed(data(0, 1000, 4));
    Listed target = new Listed(data(0, 1000, 4), data(6, 4000, 2));

    assertThat(all(Ranges.changed(base, target, 0, 8 * K))).containsExactly(blocks(6, 2));
  }

  @Test
  void changedRangesStartAtTheStartingOffset() {
    Listed base = new Listed(data(0, 1000, 16));
    Listed target = new Listed(data(0, 5000, 16));

    assertThat(all(Ranges.changed(base, target, 6 * K + 100, 16 * K)))
        .containsExactly(new ByteRange(6 * K + 100, 10 * K - 100));
  }

  @Test
  void manyExtentsAreMergedIntoOneRangeWithoutHoldingThemAll() {
    // 100,000 one-block extents back to back: one range.
    ExtentSource many =
        new ExtentSource() {
          private long block;

          @Override
          public Optional<Extent> next() {
            return block < 100_000 ? Optional.of(data(block, 2 * block++, 1)) : Optional.empty();
          }

          @Override
          public void close() {}
        };

    assertThat(all(Ranges.allocated(many, 0, 100_000 * K))).containsExactly(blocks(0, 100_000));
  }
}

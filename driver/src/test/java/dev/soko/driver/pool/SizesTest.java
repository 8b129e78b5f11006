package dev.soko.driver.pool;

import static dev.soko.driver.pool.Sizes.MIB;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.AccessType;
import org.junit.jupiter.api.Test;

class SizesTest {

  private static PoolException.Kind reasonOf(Runnable call) {
    try {
      call.run();
    } catch (PoolException e) {
      return e.kind();
    }
    throw new AssertionError("expected a PoolException");
  }

  @Test
  void roundsUpToWholeMebibytes() {
    assertThat(Sizes.resolve(1, 0, MIB)).isEqualTo(MIB);
    assertThat(Sizes.resolve(MIB + 1, 0, MIB)).isEqualTo(2 * MIB);
    assertThat(Sizes.resolve(5 * MIB, 5 * MIB, MIB)).isEqualTo(5 * MIB);
  }

  @Test
  void noRequiredSizeMeansTheDefaultCappedByTheLimit() {
    assertThat(Sizes.resolve(0, 0, MIB)).isEqualTo(Sizes.DEFAULT_BYTES);
    assertThat(Sizes.resolve(0, 100 * MIB, MIB)).isEqualTo(100 * MIB);
  }

  @Test
  void smallXfsIsRoundedUpWithinTheLimitOrRefused() {
    long min = Sizes.minimumFor(AccessType.FILESYSTEM, "xfs");
    assertThat(min).isEqualTo(300 * MIB);
    assertThat(Sizes.resolve(10 * MIB, 0, min)).isEqualTo(300 * MIB);
    assertThat(Sizes.resolve(10 * MIB, 400 * MIB, min)).isEqualTo(300 * MIB);
    assertThat(reasonOf(() -> Sizes.resolve(10 * MIB, 200 * MIB, min)))
        .isEqualTo(PoolException.Kind.SIZE_OUT_OF_RANGE);
  }

  @Test
  void roundingDownToTheLimitMustStillSatisfyRequired() {
    // 1.5 MiB exactly: rounding up overshoots the limit and rounding down misses required.
    assertThat(reasonOf(() -> Sizes.resolve(MIB + MIB / 2, MIB + MIB / 2, MIB)))
        .isEqualTo(PoolException.Kind.SIZE_OUT_OF_RANGE);
    assertThat(Sizes.resolve(MIB, MIB + MIB / 2, MIB)).isEqualTo(MIB);
  }

  @Test
  void rejectsNegativeInvertedAndAbsurdRanges() {
    assertThat(reasonOf(() -> Sizes.resolve(-1, 0, MIB))).isEqualTo(PoolException.Kind.BAD_INPUT);
    assertThat(reasonOf(() -> Sizes.resolve(0, -5, MIB))).isEqualTo(PoolException.Kind.BAD_INPUT);
    assertThat(reasonOf(() -> Sizes.resolve(10 * MIB, 5 * MIB, MIB)))
        .isEqualTo(PoolException.Kind.SIZE_OUT_OF_RANGE);
    assertThat(reasonOf(() -> Sizes.resolve(Long.MAX_VALUE, 0, MIB)))
        .isEqualTo(PoolException.Kind.SIZE_OUT_OF_RANGE);
  }

  @Test
  void blockAndExt4HaveSmallerMinimums() {
    assertThat(Sizes.minimumFor(AccessType.BLOCK, "")).isEqualTo(MIB);
    assertThat(Sizes.minimumFor(AccessType.FILESYSTEM, "ext4")).isEqualTo(16 * MIB);
  }
}

package dev.soko.e2e;

import java.util.Arrays;

/** A set of durations in milliseconds: nearest-rank percentiles, the mean and the maximum. */
record Spread(long[] sortedMillis) {
  static Spread of(long[] millis) {
    long[] sorted = millis.clone();
    Arrays.sort(sorted);
    return new Spread(sorted);
  }

  int count() {
    return sortedMillis.length;
  }

  /** The nearest-rank percentile {@code p} (0 < p <= 100), in seconds; NaN when empty. */
  double percentile(double p) {
    if (sortedMillis.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p / 100.0 * sortedMillis.length);
    return sortedMillis[Math.max(0, rank - 1)] / 1000.0;
  }

  double max() {
    return percentile(100);
  }

  double mean() {
    return sortedMillis.length == 0
        ? Double.NaN
        : Arrays.stream(sortedMillis).average().orElseThrow() / 1000.0;
  }

  /** "p50 / p99 / max" in seconds, one decimal. */
  String summary() {
    return "%.1f / %.1f / %.1f".formatted(percentile(50), percentile(99), max());
  }
}

package dev.soko.driver.bench;

import java.util.Arrays;

/** Collected latencies of one operation, in milliseconds. Thread-safe appends. */
final class Latencies {
  private double[] values = new double[64];
  private int size;

  synchronized void add(double millis) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = millis;
  }

  /** The nearest-rank percentile, {@code p} in (0, 100]. */
  synchronized double percentile(double p) {
    if (size == 0) {
      throw new IllegalStateException("no samples");
    }
    double[] sorted = Arrays.copyOf(values, size);
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * size);
    return sorted[Math.max(0, rank - 1)];
  }

  synchronized int count() {
    return size;
  }
}

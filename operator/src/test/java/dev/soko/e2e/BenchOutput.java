package dev.soko.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** What the benchmarks on the local cluster share: the machine's load, elapsed time, progress. */
final class BenchOutput {
  private BenchOutput() {}

  /** The one-, five- and fifteen-minute load averages, as /proc/loadavg gives them. */
  static String loadAverage() throws IOException {
    String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
    return fields[0] + " " + fields[1] + " " + fields[2];
  }

  /** Seconds since {@code started} (a {@link System#nanoTime} reading). */
  static double seconds(long started) {
    return (System.nanoTime() - started) / 1e9;
  }

  /** A progress line on stderr; stdout carries the results. */
  static void progress(String format, Object... args) {
    System.err.printf(Locale.ROOT, format + "%n", args);
  }
}

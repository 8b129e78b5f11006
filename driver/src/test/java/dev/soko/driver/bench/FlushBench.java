package dev.soko.driver.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The durability floor of a pool: the p50 of one 4 KiB overwrite plus {@code fdatasync} of a
 * preallocated file in it, which is what the driver's journal pays for each create, delete or
 * update before it answers. {@code make bench} prints it beside the lifecycle rows, so a reader can
 * tell the cost of durability from the cost of the driver's own work.
 *
 * <pre>FlushBench DIR</pre>
 *
 * prints {@code durable_flush_p50_ms<TAB>value}.
 */
public final class FlushBench {
  private static final int BLOCK = 4096;
  private static final int BLOCKS = 512; // 2 MiB, the size of a driver journal
  private static final int WARMUP = 100;
  private static final int SAMPLES = 1000;

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: FlushBench DIR");
      System.exit(2);
    }
    Path file = Files.createTempFile(Path.of(args[0]), "flush-bench", ".tmp");
    try {
      System.out.printf("durable_flush_p50_ms\t%.2f%n", flushP50(file));
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private static double flushP50(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      // Written and synced once, like the journal's preallocation, so that each measured flush
      // carries data only and no block allocation.
      ByteBuffer block = ByteBuffer.allocateDirect(BLOCK);
      for (int i = 0; i < BLOCKS; i++) {
        channel.write(block.clear(), (long) i * BLOCK);
      }
      channel.force(true);
      Latencies flushes = new Latencies();
      for (int i = -WARMUP; i < SAMPLES; i++) {
        block.clear().putLong(0, i);
        long start = System.nanoTime();
        channel.write(block, (long) Math.floorMod(i, BLOCKS) * BLOCK);
        channel.force(false);
        if (i >= 0) {
          flushes.add((System.nanoTime() - start) / 1e6);
        }
      }
      return flushes.percentile(50);
    }
  }
}

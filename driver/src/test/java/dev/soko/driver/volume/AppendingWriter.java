package dev.soko.driver.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A database's commit pattern for {@link PowerLossIT}: a thread appends 4 KiB records to a file,
 * each fdatasynced before {@link #synced} counts it. Record N holds N and bytes derived from N, so
 * a reader can tell an intact record from zeros, a torn write or another record.
 */
final class AppendingWriter implements AutoCloseable {
  static final int RECORD = 4096;

  private final AtomicLong synced = new AtomicLong();
  private final Thread thread;
  private volatile boolean stop;
  private volatile Exception failure;

  AppendingWriter(Path file) throws IOException {
    FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    thread =
        new Thread(
            () -> {
              try (channel) {
                for (long n = 0; !stop; n++) {
                  ByteBuffer record = ByteBuffer.wrap(record(n));
                  while (record.hasRemaining()) {
                    channel.write(record, n * RECORD + record.position());
                  }
                  channel.force(false); // fdatasync(2): what the application relies on
                  synced.set(n + 1);
                }
              } catch (IOException e) {
                failure = e;
              }
            },
            "appending-writer");
    thread.start();
  }

  /** Records whose fdatasync has returned. */
  long synced() {
    return synced.get();
  }

  static byte[] record(long n) {
    byte[] bytes = new byte[RECORD];
    new Random(n).nextBytes(bytes);
    ByteBuffer.wrap(bytes).putLong(0, n);
    return bytes;
  }

  /** How many records, from the first, are intact in {@code file}. */
  static long intactRecords(Path file) throws IOException {
    if (!Files.exists(file)) {
      return 0;
    }
    byte[] data = Files.readAllBytes(file);
    long n = 0;
    while ((n + 1) * RECORD <= data.length
        && java.util.Arrays.equals(
            data, (int) (n * RECORD), (int) ((n + 1) * RECORD), record(n), 0, RECORD)) {
      n++;
    }
    return n;
  }

  @Override
  public void close() throws Exception {
    stop = true;
    thread.join();
    if (failure != null) {
      throw failure;
    }
  }
}

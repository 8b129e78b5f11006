package dev.soko.driver.volume;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An application spread over two volumes, for {@link GroupSnapshotIT}: a thread appends record N to
 * a data file and then record N to a log file, N = 1, 2, ..., and never syncs either, so what the
 * volumes' devices hold lags far behind what it wrote until something flushes them. Record N is N
 * in 15 decimal digits and a newline, so a reader tells an intact record from zeros or a torn one.
 * A copy of both taken at one instant holds a log whose last record is the data's or one before it.
 */
final class RecordPairWriter implements AutoCloseable {
  static final int RECORD = 16;

  private final AtomicLong data = new AtomicLong();
  private final AtomicLong log = new AtomicLong();
  private final Thread thread;
  private volatile boolean stop;
  private volatile Exception failure;

  RecordPairWriter(Path dataFile, Path logFile) throws IOException {
    FileChannel dataChannel = open(dataFile);
    FileChannel logChannel = open(logFile);
    thread =
        new Thread(
            () -> {
              try (dataChannel;
                  logChannel) {
                for (long n = 1; !stop; n++) {
                  append(dataChannel, n);
                  data.set(n);
                  append(logChannel, n);
                  log.set(n);
                  if (n % 64 == 0) {
                    Thread.sleep(1); // about 64,000 records a second: the volumes do not fill
                  }
                }
              } catch (IOException | InterruptedException e) {
                failure = e;
              }
            },
            "record-pair-writer");
    thread.start();
  }

  private static FileChannel open(Path file) throws IOException {
    return FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
  }

  private static void append(FileChannel channel, long n) throws IOException {
    ByteBuffer record = ByteBuffer.wrap(record(n));
    while (record.hasRemaining()) {
      channel.write(record);
    }
  }

  static byte[] record(long n) {
    return String.format("%015d%n", n).getBytes(StandardCharsets.US_ASCII);
  }

  /** Records whose write to the data file has returned. */
  long dataRecords() {
    return data.get();
  }

  /** Records whose write to the log file has returned (each is in the data file too). */
  long logRecords() {
    return log.get();
  }

  /** Waits until the log holds more than {@code records}; fails if the writer stopped. */
  void awaitMoreThan(long records, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (log.get() <= records) {
      if (failure != null || !thread.isAlive()) {
        throw new IllegalStateException("the writer stopped", failure);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the writer wrote " + log.get() + " records, not more than " + records + " in time");
      }
      Thread.sleep(10);
    }
  }

  /** How many records, from the first, are intact in {@code file}; 0 if it does not exist. */
  static long intactRecords(Path file) throws IOException {
    long n = 0;
    try (InputStream in = new java.io.BufferedInputStream(Files.newInputStream(file))) {
      byte[] read = new byte[RECORD];
      while (in.readNBytes(read, 0, RECORD) == RECORD
          && java.util.Arrays.equals(read, record(n + 1))) {
        n++;
      }
    } catch (NoSuchFileException e) {
      return 0;
    }
    return n;
  }

  @Override
  public void close() throws Exception {
    stop = true;
    thread.join(20_000);
    if (failure != null) {
      throw failure;
    }
  }
}

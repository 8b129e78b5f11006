package dev.soko.driver.state;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * A write-ahead log of record changes, so that a change is durable after one {@code fdatasync} of a
 * preallocated file instead of the two fsyncs and the directory fsync a record file costs. The file
 * has a fixed size and is written full of zeros when created: an append overwrites blocks that
 * already exist, so flushing it writes data only, never file-system metadata.
 *
 * <p>Layout: a header (magic, epoch, CRC-32C) in the first 512-byte sector, entries from {@link
 * #HEADER_BYTES} on: {@code length, crc, body} with body {@code epoch, op, id, payload}. Replay
 * reads entries of the header's epoch up to the first one that is short, torn (bad CRC) or older (a
 * previous epoch's leftover): everything after it was never acknowledged. {@link #reset} starts a
 * new epoch, which retires every entry at once.
 *
 * <p>Group commit: concurrent appenders share one flush. Each append takes a ticket; {@link
 * #awaitDurable} returns once a flush covered it, and the thread that finds none in progress writes
 * and flushes every pending entry for all of them.
 */
final class Journal {
  static final int HEADER_BYTES = 4096;
  private static final byte[] MAGIC = "SOKOJNL1".getBytes(StandardCharsets.US_ASCII);
  private static final int ENTRY_PREFIX = 8; // length + crc
  private static final int BODY_FIXED = 8 + 1 + 2; // epoch + op + id length

  enum Op {
    PUT,
    DELETE
  }

  /** One replayed change: {@code payload} is the record's JSON for PUT, empty for DELETE. */
  record Entry(Op op, String id, String payload) {}

  private final Path file;
  private final FileChannel channel;
  private final long capacity;
  private final ReentrantLock flushLock = new ReentrantLock();
  private List<Entry> replayed; // handed over once, then released: payloads add up to 2 MiB

  // Guarded by "this": what was appended but not yet handed to a flush.
  private long epoch;
  private long endOffset; // where the next pending entry goes
  private ByteBuffer pending = ByteBuffer.allocate(16 * 1024);
  private long pendingOffset; // file offset of pending's first byte
  private long appendedTicket;
  private volatile long durableTicket;

  /** What replay found: the entries, and the offset just past the last one. */
  private record Replay(List<Entry> entries, long end) {}

  private Journal(Path file, FileChannel channel, long capacity, long epoch, Replay replay) {
    this.file = file;
    this.channel = channel;
    this.capacity = capacity;
    this.epoch = epoch;
    this.replayed = replay.entries();
    this.endOffset = replay.end();
    this.pendingOffset = replay.end();
  }

  /**
   * Opens the journal at {@code file}, creating it (atomically, zero-filled to {@code capacity})
   * when absent, and reads the entries of its current epoch.
   */
  static Journal open(Path file, long capacity) {
    try {
      if (!Files.exists(file)) {
        create(file, capacity);
      }
      FileChannel channel =
          FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
      long size = channel.size();
      long epoch = readEpoch(channel);
      return new Journal(file, channel, size, epoch, replay(channel, epoch, size));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open journal " + file, e);
    }
  }

  /**
   * The entries found at open, oldest first: the changes after the last checkpoint. The journal
   * keeps no copy, so later calls return nothing.
   */
  List<Entry> takeReplayed() {
    List<Entry> entries = replayed;
    replayed = List.of();
    return entries;
  }

  /**
   * Adds an entry to the next flush.
   *
   * @return the ticket to wait for with {@link #awaitDurable}, or -1 when the journal is full
   * @throws IllegalArgumentException when the entry could never fit
   */
  synchronized long append(Op op, String id, String payload) {
    byte[] idBytes = id.getBytes(StandardCharsets.US_ASCII);
    byte[] payloadBytes = payload.getBytes(StandardCharsets.UTF_8);
    int bodyLength = BODY_FIXED + idBytes.length + payloadBytes.length;
    if (HEADER_BYTES + ENTRY_PREFIX + bodyLength > capacity) {
      throw new IllegalArgumentException(
          "record of " + payloadBytes.length + " bytes is too large");
    }
    if (endOffset + ENTRY_PREFIX + bodyLength > capacity) {
      return -1;
    }
    ByteBuffer body = ByteBuffer.allocate(bodyLength);
    body.putLong(epoch).put((byte) op.ordinal()).putShort((short) idBytes.length);
    body.put(idBytes).put(payloadBytes).flip();
    CRC32C crc = new CRC32C();
    crc.update(body.duplicate());
    ensurePendingRoom(ENTRY_PREFIX + bodyLength);
    pending.putInt(bodyLength).putInt((int) crc.getValue()).put(body);
    endOffset += ENTRY_PREFIX + bodyLength;
    return ++appendedTicket;
  }

  /**
   * Returns once the entry with {@code ticket} is on stable storage, flushing if nobody else is.
   */
  void awaitDurable(long ticket) {
    if (durableTicket >= ticket) {
      return;
    }
    flushLock.lock();
    try {
      if (durableTicket < ticket) {
        flushPending();
      }
    } finally {
      flushLock.unlock();
    }
  }

  /** Makes every appended entry durable. */
  void flush() {
    flushLock.lock();
    try {
      flushPending();
    } finally {
      flushLock.unlock();
    }
  }

  /**
   * Retires every entry by starting a new epoch. Only after the records they describe are durable
   * elsewhere (a checkpoint), and with no append running: the caller holds the store's lock.
   */
  void reset() {
    flushLock.lock();
    try {
      flushPending();
      synchronized (this) {
        epoch++;
        channel.write(header(epoch), 0);
        channel.force(false);
        endOffset = HEADER_BYTES;
        pendingOffset = HEADER_BYTES;
        durableTicket = appendedTicket;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot reset journal " + file, e);
    } finally {
      flushLock.unlock();
    }
  }

  void close() {
    try {
      channel.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot close journal " + file, e);
    }
  }

  /** Room left for entries, in bytes (for tests and metrics). */
  synchronized long freeBytes() {
    return capacity - endOffset;
  }

  private void flushPending() {
    ByteBuffer batch;
    long at;
    long upTo;
    synchronized (this) {
      upTo = appendedTicket;
      if (durableTicket >= upTo) {
        return;
      }
      pending.flip();
      batch = ByteBuffer.allocate(pending.remaining()).put(pending).flip();
      pending.clear();
      at = pendingOffset;
      pendingOffset += batch.remaining();
    }
    try {
      while (batch.hasRemaining()) {
        at += channel.write(batch, at);
      }
      channel.force(false); // fdatasync: the blocks exist, only data changed
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write journal " + file, e);
    }
    durableTicket = upTo;
  }

  private void ensurePendingRoom(int bytes) {
    if (pending.remaining() < bytes) {
      int size = Math.max(pending.capacity() * 2, pending.position() + bytes);
      ByteBuffer larger = ByteBuffer.allocate(size);
      pending.flip();
      pending = larger.put(pending);
    }
  }

  private static void create(Path file, long capacity) throws IOException {
    Path temp = file.resolveSibling("." + file.getFileName() + ".tmp");
    try (FileChannel channel = DurableFiles.rewrite(temp)) {
      ByteBuffer zeros = ByteBuffer.allocate(64 * 1024);
      for (long at = 0; at < capacity; at += zeros.capacity()) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), capacity - at));
        channel.write(zeros, at);
      }
      channel.write(header(1), 0);
      channel.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
    DurableFiles.syncDirectory(file.getParent());
  }

  private static ByteBuffer header(long epoch) {
    ByteBuffer header = ByteBuffer.allocate(MAGIC.length + 8 + 4);
    header.put(MAGIC).putLong(epoch);
    CRC32C crc = new CRC32C();
    crc.update(header.array(), 0, MAGIC.length + 8);
    return header.putInt((int) crc.getValue()).flip();
  }

  private static long readEpoch(FileChannel channel) throws IOException {
    ByteBuffer header = ByteBuffer.allocate(MAGIC.length + 8 + 4);
    channel.read(header, 0);
    header.flip();
    byte[] magic = new byte[MAGIC.length];
    if (header.remaining() < header.capacity()) {
      throw new IOException("journal header is truncated");
    }
    header.get(magic);
    long epoch = header.getLong();
    CRC32C crc = new CRC32C();
    crc.update(header.array(), 0, MAGIC.length + 8);
    if (!java.util.Arrays.equals(magic, MAGIC) || header.getInt() != (int) crc.getValue()) {
      throw new IOException("journal header is not valid");
    }
    return epoch;
  }

  private static Replay replay(FileChannel channel, long epoch, long size) throws IOException {
    List<Entry> entries = new ArrayList<>();
    ByteBuffer prefix = ByteBuffer.allocate(ENTRY_PREFIX);
    long at = HEADER_BYTES;
    while (at + ENTRY_PREFIX <= size) {
      prefix.clear();
      readFully(channel, prefix, at);
      int length = prefix.getInt(0);
      if (length < BODY_FIXED || at + ENTRY_PREFIX + length > size) {
        break;
      }
      ByteBuffer body = ByteBuffer.allocate(length);
      readFully(channel, body, at + ENTRY_PREFIX);
      CRC32C crc = new CRC32C();
      crc.update(body.duplicate());
      if (prefix.getInt(4) != (int) crc.getValue() || body.getLong(0) != epoch) {
        break; // torn, or a retired epoch's leftover: the end of this epoch's entries
      }
      Entry entry = decode(body);
      if (entry == null) {
        break;
      }
      entries.add(entry);
      at += ENTRY_PREFIX + length;
    }
    return new Replay(entries, at);
  }

  private static Entry decode(ByteBuffer body) {
    body.position(8);
    int op = body.get();
    int idLength = body.getShort();
    if (op < 0 || op >= Op.values().length || idLength < 0 || idLength > body.remaining()) {
      return null;
    }
    byte[] id = new byte[idLength];
    body.get(id);
    byte[] payload = new byte[body.remaining()];
    body.get(payload);
    return new Entry(
        Op.values()[op],
        new String(id, StandardCharsets.US_ASCII),
        new String(payload, StandardCharsets.UTF_8));
  }

  private static void readFully(FileChannel channel, ByteBuffer buffer, long at)
      throws IOException {
    while (buffer.hasRemaining()) {
      int n = channel.read(buffer, at + buffer.position());
      if (n < 0) {
        throw new IOException("journal ends early");
      }
    }
    buffer.flip();
  }
}

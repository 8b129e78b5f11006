package dev.soko.driver.state;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * One directory of small JSON records, one file per ID, fronted by a {@link Journal}. A change is
 * durable once its journal entry is flushed (one fdatasync, shared by concurrent writers); the
 * record files are brought up to date in a checkpoint, when the journal fills and at every open,
 * each with the atomic protocol (temp file, fsync, rename, one directory fsync for the batch).
 * After a crash the files plus the journal's entries give exactly the acknowledged state, and a
 * leftover temp file is the only trace of an interrupted checkpoint; {@link #removeTempFiles}
 * clears it.
 *
 * <p>The records are held in memory as read or written; the engine's write order (which record
 * before which image) holds because every change is durable before {@link #write} or {@link
 * #delete} returns.
 */
public final class RecordStore {
  /** Room for about 5,000 changes between checkpoints; a pair of create and delete needs none. */
  static final long JOURNAL_BYTES = 2L << 20;

  private static final String SUFFIX = ".json";
  private static final String TEMP_SUFFIX = ".tmp";
  private static final String JOURNAL = "journal";

  private final Path dir;
  private final Predicate<String> validId;
  private final Journal journal;

  /** Current content per ID. */
  private final Map<String, String> records = new ConcurrentHashMap<>();

  /** IDs whose record file is not UTF-8: kept as they are until quarantined. */
  private final Set<String> unreadable = ConcurrentHashMap.newKeySet();

  /** IDs changed since the last checkpoint. Guarded by "this". */
  private final Set<String> dirty = new HashSet<>();

  /**
   * IDs that have a record file. Guarded by "this". A record created and deleted between two
   * checkpoints (most of a busy node's) never gets one, so its deletion touches no file.
   */
  private final Set<String> onDisk = new HashSet<>();

  /** IDs whose latest change was found in the journal at open, not in a record file. */
  private final Set<String> replayed = new HashSet<>();

  /** Runs for each ID a checkpoint is about to write, before its record file is written. */
  private final Consumer<String> beforeCheckpoint;

  public RecordStore(Path dir, Predicate<String> validId) {
    this(dir, validId, id -> {}, JOURNAL_BYTES);
  }

  /**
   * @param beforeCheckpoint called with each ID whose record a checkpoint is about to write, so
   *     that what the record describes (an image file) can be made durable first
   */
  public RecordStore(Path dir, Predicate<String> validId, Consumer<String> beforeCheckpoint) {
    this(dir, validId, beforeCheckpoint, JOURNAL_BYTES);
  }

  RecordStore(
      Path dir, Predicate<String> validId, Consumer<String> beforeCheckpoint, long journalBytes) {
    this.dir = dir;
    this.validId = validId;
    this.beforeCheckpoint = beforeCheckpoint;
    try {
      Files.createDirectories(dir);
      loadFiles();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read state directory " + dir, e);
    }
    this.journal = Journal.open(dir.resolve(JOURNAL), journalBytes);
    List<Journal.Entry> changes = journal.takeReplayed();
    for (Journal.Entry change : changes) {
      apply(change.op(), change.id(), change.payload());
      replayed.add(change.id());
    }
    if (!changes.isEmpty()) {
      synchronized (this) {
        checkpoint();
      }
    }
  }

  public Path dir() {
    return dir;
  }

  public void write(String id, Map<String, String> fields) {
    checkId(id);
    commit(Journal.Op.PUT, id, FlatJson.write(fields));
  }

  /**
   * Reads a record.
   *
   * @throws IllegalArgumentException when the record exists but is not a valid one
   */
  public Optional<Map<String, String>> read(String id) {
    checkId(id);
    String text = records.get(id);
    if (text == null) {
      return Optional.empty();
    }
    if (unreadable.contains(id)) {
      throw new IllegalArgumentException("record " + file(id) + " is not UTF-8 text");
    }
    return Optional.of(FlatJson.parse(text));
  }

  /**
   * Whether the record's latest change was replayed from the journal at open: written shortly
   * before a crash, so what it describes may not have reached the disk (see {@code
   * beforeCheckpoint}).
   */
  public synchronized boolean replayedFromJournal(String id) {
    return replayed.contains(id);
  }

  /** IDs of all records, in no particular order. */
  public List<String> ids() {
    return new ArrayList<>(records.keySet());
  }

  public void delete(String id) {
    checkId(id);
    if (records.containsKey(id)) {
      commit(Journal.Op.DELETE, id, "");
    }
  }

  /** Moves an unreadable record aside (never deletes it: it may describe data) and says where. */
  public synchronized Path quarantine(String id) {
    checkId(id);
    Path aside = dir.resolve(id + SUFFIX + ".corrupt");
    try {
      checkpoint(); // the record's file then holds exactly what is known of it
      if (Files.exists(file(id))) {
        Files.move(file(id), aside, StandardCopyOption.REPLACE_EXISTING);
      }
      records.remove(id);
      unreadable.remove(id);
      onDisk.remove(id);
      syncDirectory();
      return aside;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot quarantine record " + file(id), e);
    }
  }

  /** Removes temp files left by checkpoints a crash interrupted; returns how many. */
  public int removeTempFiles() {
    int removed = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, ".*" + TEMP_SUFFIX)) {
      for (Path entry : entries) {
        Files.deleteIfExists(entry);
        removed++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot clean " + dir, e);
    }
    if (removed > 0) {
      syncDirectory();
    }
    return removed;
  }

  /** Brings the record files up to date and empties the journal. */
  public synchronized void checkpoint() {
    journal.flush();
    if (dirty.isEmpty()) {
      return;
    }
    try {
      for (String id : dirty) {
        String text = records.get(id);
        if (text == null) {
          if (onDisk.remove(id)) {
            Files.deleteIfExists(file(id));
          }
        } else if (!unreadable.contains(id)) {
          beforeCheckpoint.accept(id);
          writeFile(id, text);
          onDisk.add(id);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the records of " + dir, e);
    }
    syncDirectory();
    journal.reset();
    dirty.clear();
  }

  /** Checkpoints and closes the journal; the store is not used afterwards. */
  public synchronized void close() {
    checkpoint();
    journal.close();
  }

  private void commit(Journal.Op op, String id, String payload) {
    long ticket;
    synchronized (this) {
      ticket = journal.append(op, id, payload);
      if (ticket < 0) {
        checkpoint();
        ticket = journal.append(op, id, payload);
      }
      apply(op, id, payload);
    }
    // Outside the lock, so that concurrent writers share a flush.
    journal.awaitDurable(ticket);
  }

  private void apply(Journal.Op op, String id, String payload) {
    if (!validId.test(id)) {
      return; // only written through checkId: a stray entry cannot name a path
    }
    unreadable.remove(id);
    if (op == Journal.Op.PUT) {
      records.put(id, payload);
    } else {
      records.remove(id);
    }
    dirty.add(id);
  }

  private void loadFiles() throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        String id = name.substring(0, name.length() - SUFFIX.length());
        if (validId.test(id)) {
          Optional<String> text = decode(Files.readAllBytes(entry));
          records.put(id, text.orElse(""));
          onDisk.add(id);
          if (text.isEmpty()) {
            unreadable.add(id);
          }
        }
      }
    }
  }

  private static Optional<String> decode(byte[] bytes) {
    try {
      return Optional.of(
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString());
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }

  /** Temp file, fsync, rename; the caller fsyncs the directory once for the batch. */
  private void writeFile(String id, String text) throws IOException {
    Path temp = dir.resolve("." + id + SUFFIX + TEMP_SUFFIX);
    try (FileChannel channel = DurableFiles.rewrite(temp)) {
      ByteBuffer buffer = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
      channel.force(true);
    }
    Files.move(temp, file(id), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private void checkId(String id) {
    if (id == null || !validId.test(id)) {
      throw new IllegalArgumentException("not a valid record ID: " + id);
    }
  }

  private Path file(String id) {
    checkId(id);
    return dir.resolve(id + SUFFIX);
  }

  private void syncDirectory() {
    DurableFiles.syncDirectory(dir);
  }
}

package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.Entry;
import dev.soko.data.v1.DataProto.FileData;
import dev.soko.data.v1.DataProto.TreeEnd;
import dev.soko.driver.sys.SyscallException;
import dev.soko.driver.sys.Syscalls;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a ReadTree stream into an empty directory (a new subvolume), trusting nothing it carries:
 * every name is one name (never empty, ".", "..", nor holding "/" or NUL), every parent an earlier
 * directory of this stream, and nothing is created where anything already is, so no write can pass
 * through a symbolic link or leave the directory. Entries are created with O_EXCL semantics (mkdir,
 * create-new, symlink, link), which never follow a link in their last name, and their parents are
 * directories this writer made; before each entry its parent's real path is checked to lie in the
 * directory all the same. Regular files are set to their size first and get only the chunks that
 * arrive (holes stay holes); owners, modes and times are set once a file is complete, a directory's
 * last (its entries would change its time), and the filesystem is synced once at the end (syncfs),
 * not file by file. Only the directories and the files marked as having other names are remembered,
 * so a tree of any number of files costs the memory of its directories. Any refusal is INTERNAL and
 * names the source; the caller removes the directory.
 */
final class TreeWriter implements AutoCloseable {
  /** What this writer made of one entry: where it is and what it is. */
  private record Made(Path path, Entry entry) {}

  private static final int O_RDONLY = 0;

  private final String source;
  private final Path root;
  private final Path realRoot;
  private final Syscalls syscalls;

  /** The directories and the files with other names, by their number in the stream. */
  private final Map<Long, Made> kept = new HashMap<>();

  private long entries;
  private RandomAccessFile file;
  private Made fileEntry;
  private long next;
  private long chunks;
  private long dataBytes;
  private boolean ended;

  /**
   * @param source what is copied and from where, for messages ("snapshot X of node N at E")
   * @param root the empty directory to write into
   */
  TreeWriter(String source, Path root, Syscalls syscalls) throws IOException {
    this.source = source;
    this.root = root;
    this.realRoot = root.toRealPath();
    this.syscalls = syscalls;
  }

  void accept(Entry entry) throws IOException {
    if (ended) {
      throw refused("an entry came after the end of the stream");
    }
    finishFile();
    long index = entries;
    if (index == 0) {
      if (entry.getKind() != Entry.Kind.DIRECTORY || !entry.getName().isEmpty()) {
        throw refused("the stream does not begin with its root directory");
      }
      kept.put(0L, new Made(root, entry));
      entries++;
      return;
    }
    String name = checkName(entry.getName(), index);
    if (entry.getParent() < 0 || entry.getParent() >= index) {
      throw refused("entry " + index + " names entry " + entry.getParent() + " as its parent");
    }
    Made parent = kept.get(entry.getParent());
    if (parent == null || parent.entry().getKind() != Entry.Kind.DIRECTORY) {
      throw refused(
          "entry " + index + " (" + name + ") is placed in an entry that is not a directory");
    }
    // Every link resolved (the pool's own directory may lie behind one, as the root's real path
    // does): a parent that is not inside the copy after that is not to be written in.
    if (!parent.path().toRealPath().startsWith(realRoot)) {
      throw refused("entry " + index + " (" + name + ") would be written outside the copy");
    }
    Path path = parent.path().resolve(name);
    try {
      create(entry, path, index);
    } catch (java.nio.file.FileAlreadyExistsException e) {
      throw refused("entry " + index + " (" + name + ") names what an earlier entry made");
    }
    if (entry.getKind() == Entry.Kind.DIRECTORY
        || (entry.getKind() == Entry.Kind.REGULAR && entry.getHasLinks())) {
      kept.put(index, new Made(path, entry));
    }
    entries++;
  }

  private void create(Entry entry, Path path, long index) throws IOException {
    switch (entry.getKind()) {
      case DIRECTORY -> Files.createDirectory(path);
      case REGULAR -> {
        if (entry.getSizeBytes() < 0) {
          throw refused("entry " + index + " has a size of " + entry.getSizeBytes() + " bytes");
        }
        // Created here (O_EXCL: never through a link), so the open that follows finds this file.
        Files.createFile(path);
        file = new RandomAccessFile(path.toFile(), "rw");
        file.setLength(entry.getSizeBytes());
        fileEntry = new Made(path, entry);
        next = 0;
      }
      case SYMLINK -> {
        Path target;
        try {
          target = Path.of(entry.getSymlinkTarget());
        } catch (InvalidPathException e) {
          throw refused("entry " + index + " is a symlink to a path that cannot be one");
        }
        if (entry.getSymlinkTarget().isEmpty()) {
          throw refused("entry " + index + " is a symlink to nothing");
        }
        // Stored as sent: a link in the copy is never followed by this writer.
        Files.createSymbolicLink(path, target);
        setAttributes(path, entry);
      }
      case HARD_LINK -> {
        Made file = kept.get(entry.getLinkTo());
        if (file == null || file.entry().getKind() != Entry.Kind.REGULAR) {
          throw refused(
              "entry "
                  + index
                  + " links to entry "
                  + entry.getLinkTo()
                  + ", not an earlier file with other names");
        }
        Files.createLink(path, file.path());
      }
      default -> throw refused("entry " + index + " is of no known kind");
    }
  }

  /** One name of a directory's entry, or a refusal. */
  private String checkName(String name, long index) {
    if (name.isEmpty()
        || name.equals(".")
        || name.equals("..")
        || name.indexOf('/') >= 0
        || name.indexOf('\0') >= 0) {
      throw refused(
          "entry " + index + " is named '" + printable(name) + "', which is not one name");
    }
    return name;
  }

  private static String printable(String name) {
    return name.replace("\0", "\\0");
  }

  void accept(FileData data) throws IOException {
    if (ended) {
      throw refused("data came after the end of the stream");
    }
    if (file == null) {
      throw refused("data came for an entry that is not a regular file");
    }
    long offset = data.getOffset();
    int length = data.getData().size();
    ChunkRules.check(
        offset,
        data.getData(),
        data.getCrc32C(),
        next,
        fileEntry.entry().getSizeBytes(),
        "its file's",
        " of file " + fileEntry.entry().getName(),
        this::refused);
    ByteBuffer bytes = data.getData().asReadOnlyByteBuffer();
    long at = offset;
    while (bytes.hasRemaining()) {
      at += file.getChannel().write(bytes, at);
    }
    next = offset + length;
    chunks++;
    dataBytes += length;
  }

  /** Checks the stream's End and finishes the tree: the last file, then every directory. */
  void end(TreeEnd end) throws IOException {
    if (ended) {
      throw refused("the stream ended twice");
    }
    finishFile();
    if (entries == 0) {
      throw refused("the stream ended without its root directory");
    }
    if (end.getEntries() != entries
        || end.getChunks() != chunks
        || end.getDataBytes() != dataBytes) {
      throw refused(
          String.format(
              "the stream's end counts %d entries, %d chunks and %d bytes sent; %d, %d and %d"
                  + " arrived",
              end.getEntries(), end.getChunks(), end.getDataBytes(), entries, chunks, dataBytes));
    }
    // Deepest first (a directory's number is above its parent's): setting a directory's time
    // after its entries were made keeps it.
    List<Long> numbers = new ArrayList<>(kept.keySet());
    numbers.sort(Comparator.reverseOrder());
    for (long number : numbers) {
      Made m = kept.get(number);
      if (m.entry().getKind() == Entry.Kind.DIRECTORY) {
        setAttributes(m.path(), m.entry());
      }
    }
    sync();
    ended = true;
  }

  /** Once the stream closed without an error: throws unless its End arrived. */
  void complete() {
    if (!ended) {
      throw refused(
          "the stream closed after "
              + entries
              + " entries without its end: the copy is incomplete");
    }
  }

  long dataBytes() {
    return dataBytes;
  }

  /** Closes the file being written, then sets its owner, mode and time. */
  private void finishFile() throws IOException {
    if (file == null) {
      return;
    }
    try {
      file.close();
    } finally {
      file = null;
    }
    setAttributes(fileEntry.path(), fileEntry.entry());
    fileEntry = null;
  }

  /** One write-back of the whole copy: a file-by-file fsync would cost a commit per file. */
  private void sync() {
    try {
      int fd = syscalls.open(root.toString(), O_RDONLY);
      try {
        syscalls.syncfs(fd);
      } finally {
        syscalls.close(fd);
      }
    } catch (SyscallException e) {
      throw StorageException.internal(
          "copy of " + source + " failed: cannot sync its files: " + e.errnoName(), e);
    }
  }

  /** Owner first (a chown clears set-user-ID), then mode, then time; a symlink's own. */
  private static void setAttributes(Path path, Entry entry) throws IOException {
    Files.setAttribute(path, "unix:uid", entry.getUid(), LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(path, "unix:gid", entry.getGid(), LinkOption.NOFOLLOW_LINKS);
    if (entry.getKind() != Entry.Kind.SYMLINK) {
      Files.setAttribute(path, "unix:mode", entry.getMode() & 07777, LinkOption.NOFOLLOW_LINKS);
    }
    FileTime mtime =
        FileTime.from(Instant.ofEpochSecond(entry.getMtimeSeconds(), entry.getMtimeNanos()));
    Files.getFileAttributeView(path, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setTimes(mtime, null, null);
  }

  /** A write failure in the client's terms: a full volume or pool is RESOURCE_EXHAUSTED. */
  StorageException failed(IOException e) {
    String reason = e instanceof FileSystemException fs ? fs.getReason() : e.getMessage();
    if (reason != null
        && (reason.contains("quota") || reason.contains("No space left on device"))) {
      return new StorageException(
          StorageException.Reason.RESOURCE_EXHAUSTED,
          "copy of " + source + " failed: the new volume is full (" + reason + ")");
    }
    return StorageException.internal(
        "copy of " + source + " failed: cannot write its files: " + e.getClass().getSimpleName(),
        e);
  }

  private StorageException refused(String what) {
    return new StorageException(
        StorageException.Reason.INTERNAL, "copy of " + source + " refused: " + what);
  }

  @Override
  public void close() {
    if (file != null) {
      try {
        file.close();
      } catch (IOException e) {
        // The caller removes the whole copy.
      }
      file = null;
    }
  }
}

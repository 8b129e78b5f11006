package dev.soko.driver.transfer;

import com.google.protobuf.UnsafeByteOperations;
import dev.soko.data.v1.DataProto.Entry;
import dev.soko.data.v1.DataProto.FileData;
import dev.soko.data.v1.DataProto.TreeEnd;
import dev.soko.data.v1.DataProto.TreeReply;
import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.extent.FileExtents;
import dev.soko.driver.extent.RangeCursor;
import dev.soko.driver.extent.Ranges;
import dev.soko.driver.server.PacedReply;
import dev.soko.driver.sys.SyscallException;
import dev.soko.driver.sys.Syscalls;
import dev.soko.driver.volume.FileTree;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link FileTree} as the messages of a ReadTree stream, made as they are asked for: a walk of
 * the tree, depth first, that holds one open directory per level and one open file, so a tree of
 * any size costs the same memory (hard links aside: the files with more than one name are
 * remembered by inode). A regular file's data is read at its allocated ranges (FIEMAP), in chunks
 * of at most {@link ChunkReader#MAX_CHUNK} that never cross a hole, each with its CRC32C. Symbolic
 * links are never followed. Sockets, FIFOs and device nodes are not sent (a volume's workload makes
 * them at run time; their absence is logged).
 */
final class TreeReader implements PacedReply.Source<TreeReply> {
  private static final Logger LOG = LoggerFactory.getLogger(TreeReader.class);
  private static final int TYPE_MASK = 0170000;
  private static final int DIRECTORY = 0040000;
  private static final int REGULAR = 0100000;
  private static final int SYMLINK = 0120000;
  private static final String ATTRIBUTES = "unix:mode,uid,gid,ino,dev,nlink,size,lastModifiedTime";

  private static final RangeCursor NO_RANGES =
      new RangeCursor() {
        @Override
        public Optional<ByteRange> next() {
          return Optional.empty();
        }

        @Override
        public void close() {}
      };

  /** A directory being walked: its number in the stream and its entries still to send. */
  private record Level(long index, DirectoryStream<Path> listing, Iterator<Path> children) {}

  /** The regular file whose data is being sent. */
  private record OpenFile(Path path, FileChannel channel, RangeCursor ranges) {}

  private final FileTree tree;
  private final Syscalls syscalls;
  private final ArrayDeque<Level> levels = new ArrayDeque<>();
  private final Map<String, Long> linked = new HashMap<>();
  private OpenFile file;
  private ByteRange range;
  private long position;
  private boolean started;
  private boolean ended;
  private long entries;
  private long chunks;
  private long dataBytes;

  TreeReader(FileTree tree, Syscalls syscalls) {
    this.tree = tree;
    this.syscalls = syscalls;
  }

  static void send(
      io.grpc.stub.StreamObserver<TreeReply> observer, FileTree tree, Syscalls syscalls) {
    PacedReply.send(observer, new TreeReader(tree, syscalls), "tree read stream");
  }

  @Override
  public Optional<TreeReply> next() {
    if (ended) {
      return Optional.empty();
    }
    tree.checkPresent();
    try {
      if (!started) {
        started = true;
        return Optional.of(entry(tree.root(), 0, "").orElseThrow());
      }
      while (true) {
        if (file != null) {
          Optional<FileData> data = nextData();
          if (data.isPresent()) {
            chunks++;
            dataBytes += data.get().getData().size();
            return Optional.of(TreeReply.newBuilder().setData(data.get()).build());
          }
          closeFile();
          continue;
        }
        Level level = levels.peek();
        if (level == null) {
          ended = true;
          return Optional.of(
              TreeReply.newBuilder()
                  .setEnd(
                      TreeEnd.newBuilder()
                          .setEntries(entries)
                          .setChunks(chunks)
                          .setDataBytes(dataBytes))
                  .build());
        }
        if (!level.children().hasNext()) {
          levels.pop().listing().close();
          continue;
        }
        Path child = level.children().next();
        Optional<TreeReply> entry = entry(child, level.index(), child.getFileName().toString());
        if (entry.isPresent()) {
          return entry;
        }
      }
    } catch (IOException | java.nio.file.DirectoryIteratorException e) {
      tree.checkPresent();
      throw StorageException.internal(
          "cannot read " + tree.shown() + ": " + e.getClass().getSimpleName(), e);
    } catch (SyscallException e) {
      tree.checkPresent();
      throw StorageException.internal(
          "cannot read the extents of a file of " + tree.shown() + ": " + e.errnoName(), e);
    }
  }

  /**
   * The entry of {@code path} in the directory numbered {@code parent}, opening what it leads to (a
   * directory's listing, a regular file's data); empty for a kind that is not sent.
   */
  private Optional<TreeReply> entry(Path path, long parent, String name) throws IOException {
    Map<String, Object> a = Files.readAttributes(path, ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
    int mode = (Integer) a.get("mode");
    Instant mtime = ((FileTime) a.get("lastModifiedTime")).toInstant();
    Entry.Builder entry =
        Entry.newBuilder()
            .setParent(parent)
            .setName(name)
            .setMode(mode & 07777)
            .setUid((Integer) a.get("uid"))
            .setGid((Integer) a.get("gid"))
            .setMtimeSeconds(mtime.getEpochSecond())
            .setMtimeNanos(mtime.getNano());
    long index = entries;
    switch (mode & TYPE_MASK) {
      case DIRECTORY -> {
        entry.setKind(Entry.Kind.DIRECTORY);
        DirectoryStream<Path> listing = Files.newDirectoryStream(path);
        levels.push(new Level(index, listing, listing.iterator()));
      }
      case SYMLINK ->
          entry
              .setKind(Entry.Kind.SYMLINK)
              .setMode(0)
              .setSymlinkTarget(Files.readSymbolicLink(path).toString());
      case REGULAR -> {
        String inode = a.get("dev") + ":" + a.get("ino");
        Long first = (Integer) a.get("nlink") > 1 ? linked.get(inode) : null;
        if (first != null) {
          entry.setKind(Entry.Kind.HARD_LINK).setLinkTo(first);
        } else {
          if ((Integer) a.get("nlink") > 1) {
            linked.put(inode, index);
            entry.setHasLinks(true);
          }
          long size = (Long) a.get("size");
          entry.setKind(Entry.Kind.REGULAR).setSizeBytes(size);
          openFile(path, size);
        }
      }
      default -> {
        LOG.warn(
            "{}: {} is neither a directory, a file nor a symlink; not sent", tree.shown(), name);
        return Optional.empty();
      }
    }
    entries++;
    return Optional.of(TreeReply.newBuilder().setEntry(entry).build());
  }

  private void openFile(Path path, long size) throws IOException {
    FileChannel channel =
        FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    try {
      // An empty file has no extents to ask for.
      RangeCursor ranges =
          size == 0
              ? NO_RANGES
              : Ranges.allocated(FileExtents.open(syscalls, path, 0, size), 0, size);
      file = new OpenFile(path, channel, ranges);
      range = null;
    } catch (RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  private Optional<FileData> nextData() throws IOException {
    while (range == null || position >= range.end()) {
      Optional<ByteRange> next = file.ranges().next();
      if (next.isEmpty()) {
        return Optional.empty();
      }
      range = next.get();
      position = range.offset();
    }
    int length = (int) Math.min(ChunkReader.MAX_CHUNK, range.end() - position);
    byte[] data = new byte[length];
    ByteBuffer buffer = ByteBuffer.wrap(data);
    while (buffer.hasRemaining()) {
      if (file.channel().read(buffer, position + buffer.position()) < 0) {
        // A snapshot never changes: a file shorter than its extents is not one to trust.
        throw new StorageException(
            StorageException.Reason.INTERNAL,
            tree.shown() + ": a file ended inside a range its extent map lists as data");
      }
    }
    FileData chunk =
        FileData.newBuilder()
            .setOffset(position)
            .setData(UnsafeByteOperations.unsafeWrap(data))
            .setCrc32C(ChunkRules.crc32c(data))
            .build();
    position += length;
    return Optional.of(chunk);
  }

  private void closeFile() {
    OpenFile closing = file;
    file = null;
    range = null;
    try {
      closing.ranges().close();
    } finally {
      try {
        closing.channel().close();
      } catch (IOException e) {
        // Opened read-only: nothing to lose.
      }
    }
  }

  @Override
  public void close() {
    try {
      if (file != null) {
        closeFile();
      }
      while (!levels.isEmpty()) {
        try {
          levels.pop().listing().close();
        } catch (IOException e) {
          // A listing holds nothing to lose.
        }
      }
    } finally {
      tree.close();
    }
  }
}

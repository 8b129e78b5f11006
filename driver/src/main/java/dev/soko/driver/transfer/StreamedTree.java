package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.DataProto.TreeReply;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.sys.Syscalls;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Iterator;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A snapshot (or volume) of form FILE_TREE as another node described it, copied by streaming its
 * ReadTree (or ReadVolumeTree) into an empty directory through a {@link TreeWriter}. A stream cut
 * on the way ({@link Resumes}) is followed by another from the start, into the emptied directory: a
 * tree's stream has no offset to go on from, and a volume's next stream is of another instant.
 */
final class StreamedTree extends StreamedCopy {
  private static final Logger LOG = LoggerFactory.getLogger(StreamedTree.class);

  private final Syscalls syscalls = new LinuxSyscalls();

  /**
   * Another node's snapshot, or (where the source is of a volume) its volume, of form FILE_TREE.
   */
  StreamedTree(StreamSource source) {
    super(source);
  }

  @Override
  public CopyForm form() {
    return CopyForm.FILE_TREE;
  }

  @Override
  public void copyTo(Path target) {
    String what = "copy of " + shown();
    for (int resume = 1; ; resume++) {
      Optional<Status> cut;
      try (TreeWriter writer = new TreeWriter(described(), target, syscalls)) {
        cut = stream(opening(), reply -> write(reply, writer));
        if (cut.isEmpty()) {
          writer.complete();
          return;
        }
      } catch (IOException e) {
        throw StorageException.internal(
            what + ": cannot write its files: " + e.getClass().getSimpleName(), e);
      }
      requireResume(resume, cut.get(), what);
      empty(target, what);
      LOG.atWarn()
          .addKeyValue("source", shown())
          .addKeyValue("node", node())
          .addKeyValue("resume", resume)
          .log(
              "the stream of {} from node {} was cut ({}); reading it again from the start",
              shown(),
              node(),
              cut.get().getCode());
      source.resumes().pause(resume, what);
    }
  }

  private Function<SnapshotDataGrpc.SnapshotDataBlockingStub, Iterator<TreeReply>> opening() {
    return ofVolume()
        ? stub -> stub.readVolumeTree(VolumeRef.newBuilder().setVolumeId(id()).build())
        : stub -> stub.readTree(SnapshotRef.newBuilder().setSnapshotId(id()).build());
  }

  private void write(TreeReply reply, TreeWriter writer) {
    try {
      switch (reply.getPartCase()) {
        case ENTRY -> writer.accept(reply.getEntry());
        case DATA -> writer.accept(reply.getData());
        case END -> writer.end(reply.getEnd());
        default -> throw unknownKind();
      }
    } catch (IOException e) {
      throw writer.failed(e);
    }
  }

  /**
   * Removes everything in {@code directory}, never following a link, for a stream from the start.
   */
  private static void empty(Path directory, String what) {
    try {
      Files.walkFileTree(
          directory,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
              if (e != null) {
                throw e;
              }
              if (!dir.equals(directory)) {
                Files.delete(dir);
              }
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw StorageException.internal(
          what + ": cannot empty its copy to read it again: " + e.getClass().getSimpleName(), e);
    }
  }
}

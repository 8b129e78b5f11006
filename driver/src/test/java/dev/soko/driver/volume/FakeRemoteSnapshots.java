package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Other nodes' snapshots for engine tests: each is a payload at offset 0 of a sparse image of its
 * size, written by {@code copyTo} as the data path would; one may be set to fail midway (after part
 * of its bytes are written), and {@link #find} to fail as a locator does for a node that is gone.
 */
final class FakeRemoteSnapshots implements RemoteSnapshots {
  final Map<String, Remote> held = new ConcurrentHashMap<>();
  final List<String> asked = new CopyOnWriteArrayList<>();
  final List<Path> copiedTo = new CopyOnWriteArrayList<>();
  volatile StorageException findFails;

  /** One snapshot on another node; {@code cutAfter} ≥ 0 makes its copy fail after that many. */
  record Remote(
      String id,
      String node,
      long sizeBytes,
      AccessType accessType,
      String fsType,
      byte[] payload,
      int cutAfter) {}

  Remote hold(String id, String node, long size, AccessType access, String fs, byte[] payload) {
    Remote remote = new Remote(id, node, size, access, fs, payload, -1);
    held.put(id, remote);
    return remote;
  }

  void cut(String id, int after) {
    Remote r = held.get(id);
    held.put(
        id,
        new Remote(
            r.id(), r.node(), r.sizeBytes(), r.accessType(), r.fsType(), r.payload(), after));
  }

  @Override
  public Optional<RemoteSnapshot> find(String snapshotId) {
    asked.add(snapshotId);
    if (findFails != null) {
      throw findFails;
    }
    return Optional.ofNullable(held.get(snapshotId)).map(this::described);
  }

  /** A volume of another node, held as a snapshot is (its ID says which it is). */
  @Override
  public Optional<RemoteSnapshot> findVolume(String volumeId) {
    asked.add(volumeId);
    if (findFails != null) {
      throw findFails;
    }
    return Optional.ofNullable(held.get(volumeId)).map(this::described);
  }

  private RemoteSnapshot described(Remote r) {
    return new RemoteSnapshot() {
      @Override
      public String id() {
        return r.id();
      }

      @Override
      public boolean ofVolume() {
        return r.id().startsWith("vol-");
      }

      @Override
      public String node() {
        return r.node();
      }

      @Override
      public long sizeBytes() {
        return r.sizeBytes();
      }

      @Override
      public AccessType accessType() {
        return r.accessType();
      }

      @Override
      public String fsType() {
        return r.fsType();
      }

      @Override
      public void copyTo(Path target) {
        copiedTo.add(target);
        try (RandomAccessFile file = new RandomAccessFile(target.toFile(), "rw")) {
          if (r.cutAfter() >= 0) {
            file.write(r.payload(), 0, r.cutAfter());
            throw new StorageException(
                StorageException.Reason.UNAVAILABLE,
                "the stream from node " + r.node() + " was cut after " + r.cutAfter() + " bytes");
          }
          file.setLength(r.sizeBytes());
          file.write(r.payload());
          file.getFD().sync();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    };
  }

  /** The first {@code length} bytes of an image. */
  static byte[] head(Path image, int length) throws IOException {
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "r")) {
      byte[] bytes = new byte[length];
      file.readFully(bytes);
      return bytes;
    }
  }
}

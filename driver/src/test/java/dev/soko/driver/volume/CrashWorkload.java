package dev.soko.driver.volume;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * A child process for {@link CrashConsistencyIT} and {@link PowerLossIT}: runs random
 * create/snapshot/group snapshot/restore/clone/expand/delete operations against a pool until it is
 * killed, journalling (with fsync) "begin" before and "ok" after each, so the parent knows exactly
 * what a client was told. A blank volume gets {@link #content} written (and fsynced) before its
 * create is answered, so the parent can check what snapshots, restores and clones hold: into an
 * image file's first bytes (raw block volumes), or into a file of a btrfs subvolume ({@link
 * PoolLayout}).
 *
 * <p>Arguments: pool directory, client log, run name, random seed, and optionally the pool's
 * backend ({@link PoolConfig.Backend} constant; image files when left out).
 */
public final class CrashWorkload {
  static final int CONTENT_BYTES = 4096;

  private CrashWorkload() {}

  /** The engine configuration of the workload and of the test that checks its aftermath. */
  static DriverConfig engineConfig(Path pool, Path allowedRoot) {
    return engineConfig(pool, allowedRoot, PoolConfig.Backend.IMAGE_FILE);
  }

  /** One pool of the given backend: ext4 volumes for image files, else the backend's own fs. */
  static DriverConfig engineConfig(Path pool, Path allowedRoot, PoolConfig.Backend backend) {
    Set<String> fsTypes =
        backend == PoolConfig.Backend.IMAGE_FILE
            ? new LinkedHashSet<>(List.of("ext4"))
            : backend.fsTypes();
    PoolConfig poolConfig =
        new PoolConfig("crash", pool, 64L << 30, 1.0, fsTypes, false, false, Map.of(), backend);
    return DriverConfig.node(
        "csi.soko.dev", "crash", "unix:///unused", List.of(poolConfig), List.of(allowedRoot), 8);
  }

  public static void main(String[] args) throws IOException {
    Path pool = Path.of(args[0]);
    Files.createDirectories(pool); // the driver never creates a pool's directory
    Path journal = Path.of(args[1]);
    String run = args[2];
    Random random = new Random(Long.parseLong(args[3]));
    PoolConfig.Backend backend =
        args.length > 4 ? PoolConfig.Backend.valueOf(args[4]) : PoolConfig.Backend.IMAGE_FILE;
    PoolLayout layout = new PoolLayout(pool, backend);
    DriverConfig config = engineConfig(pool, Path.of("/nonexistent-root"), backend);
    try (FileChannel out =
            FileChannel.open(
                journal,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND,
                StandardOpenOption.WRITE);
        LocalVolumeManager engine = LocalVolumeManager.open(config)) {
      // What an earlier run left, including creates a kill cut short that still happened: their
      // IDs were never logged, and operations of this run may copy them.
      List<String> volumes = new ArrayList<>();
      for (Volume v : engine.listVolumes("", 0).items()) {
        write(out, "adopt " + v.name() + " " + v.id());
        volumes.add(v.id());
      }
      List<String> snapshots = new ArrayList<>();
      for (Snapshot s : engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()) {
        write(out, "adopt " + s.name() + " " + s.id());
        snapshots.add(s.id());
      }
      Map<String, List<String>> groups = new HashMap<>(); // this run's: ID -> members
      for (int i = 0; ; i++) {
        int op = random.nextInt(12);
        String name = run + "-" + i;
        if (op < 4 || volumes.isEmpty()) {
          ContentSource source = ContentSource.EMPTY;
          if (op == 1 && !snapshots.isEmpty()) {
            source =
                new ContentSource.FromSnapshot(snapshots.get(random.nextInt(snapshots.size())));
          } else if (op == 2 && !volumes.isEmpty()) {
            source = new ContentSource.FromVolume(volumes.get(random.nextInt(volumes.size())));
          }
          long bytes = (1 + random.nextInt(8)) << 20;
          write(out, "begin create " + name + " " + describe(source));
          String id =
              engine
                  .createVolume(
                      new VolumeRequest(
                          name,
                          bytes,
                          0,
                          "",
                          layout.accessType(),
                          layout.fsType(),
                          source,
                          Map.of()))
                  .id();
          if (source instanceof ContentSource.Empty) {
            // What an application does: write, then fsync. Snapshots and clones carry it on.
            writeContent(layout.contentFile(layout.volume(id)), content(name));
          }
          write(out, "ok create " + name + " " + id);
          volumes.add(id);
        } else if (op < 6) {
          String source = volumes.get(random.nextInt(volumes.size()));
          write(out, "begin snapshot " + name + " " + source);
          String id = engine.createSnapshot(name, source).id();
          write(out, "ok snapshot " + name + " " + id);
          snapshots.add(id);
        } else if (op < 7) {
          String id = volumes.get(random.nextInt(volumes.size()));
          long bytes = (9 + random.nextInt(8)) << 20;
          write(out, "begin expand " + id + " " + bytes);
          long granted = engine.expandVolume(id, bytes, 0).capacityBytes();
          write(out, "ok expand " + id + " " + granted);
        } else if (op < 9) {
          String id = volumes.remove(random.nextInt(volumes.size()));
          write(out, "begin delete " + id);
          engine.deleteVolume(id);
          write(out, "ok delete " + id);
        } else if (op < 10 && !snapshots.isEmpty()) {
          String id = snapshots.remove(random.nextInt(snapshots.size()));
          write(out, "begin desnap " + id);
          engine.deleteSnapshot(id);
          write(out, "ok desnap " + id);
        } else if (op < 11 && volumes.size() > 1) {
          List<String> sources = new ArrayList<>(volumes);
          Collections.shuffle(sources, random);
          sources = sources.subList(0, 2);
          write(out, "begin group " + name + " " + String.join(",", sources));
          GroupSnapshot group = engine.createGroupSnapshot(name, sources);
          List<String> members = group.members().stream().map(Snapshot::id).toList();
          write(out, "ok group " + name + " " + group.id() + " " + String.join(",", members));
          groups.put(group.id(), members);
          snapshots.addAll(members); // restored, cloned and deleted alone like any snapshot
        } else if (op == 11 && !groups.isEmpty()) {
          String id = groups.keySet().iterator().next();
          write(out, "begin degroup " + id);
          engine.deleteGroupSnapshot(id, List.of());
          write(out, "ok degroup " + id);
          snapshots.removeAll(groups.remove(id));
        }
      }
    }
  }

  /** How the log names a content source: "-", "snap:ID" or "vol:ID". */
  private static String describe(ContentSource source) {
    if (source instanceof ContentSource.FromSnapshot s) {
      return "snap:" + s.snapshotId();
    }
    if (source instanceof ContentSource.FromVolume v) {
      return "vol:" + v.volumeId();
    }
    return "-";
  }

  /**
   * The first 4 KiB a blank volume named {@code name} gets written with, and that every snapshot
   * and clone made from it must hold: its name's SHA-256, repeated.
   */
  static byte[] content(String name) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
      ByteBuffer block = ByteBuffer.allocate(CONTENT_BYTES);
      while (block.hasRemaining()) {
        block.put(digest);
      }
      return block.array();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Writes the content at the start of {@code file} and makes it durable as a careful application
   * does: the data (fdatasync) of an image that exists; a new file's data and metadata, and its
   * directory's entry for it.
   */
  private static void writeContent(Path file, byte[] content) throws IOException {
    boolean created = !Files.exists(file);
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE)) {
      channel.write(ByteBuffer.wrap(content), 0);
      channel.force(created);
    }
    if (created) {
      try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
        dir.force(true);
      }
    }
  }

  private static void write(FileChannel out, String line) throws IOException {
    out.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8)));
    out.force(false);
  }
}

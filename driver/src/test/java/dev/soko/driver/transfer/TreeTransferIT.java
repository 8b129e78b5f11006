package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import dev.soko.data.v1.DataProto.AccessType;
import dev.soko.data.v1.DataProto.Entry;
import dev.soko.data.v1.DataProto.FileData;
import dev.soko.data.v1.DataProto.Form;
import dev.soko.data.v1.DataProto.SnapshotFacts;
import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.DataProto.TreeEnd;
import dev.soko.data.v1.DataProto.TreeReply;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.testing.BtrfsTools;
import dev.soko.driver.transfer.DataServer.Served;
import dev.soko.driver.volume.HostFixture;
import dev.soko.driver.volume.LocalVolumeManager;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.RemoteSnapshots;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.StorageException.Reason;
import dev.soko.driver.volume.VolumeRequest;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Restores and clones of btrfs subvolumes between two nodes' data ports on loopback, each node's
 * pool on a btrfs of its own (a loop device, quotas on): node C holds the sources, node D copies
 * them as trees of files over ReadTree and ReadVolumeTree with mutual TLS. A hostile node, served
 * in process, sends streams that try to leave the new subvolume or outgrow its limit.
 */
class TreeTransferIT {
  static final long MIB = HostFixture.MIB;
  static final String HOSTILE = "snap-hostilehostilehostil";

  @RegisterExtension static final HostFixture host = new HostFixture();

  static TestCertificates.Ca ca;
  static LocalVolumeManager nodeC;
  static LocalVolumeManager nodeD;
  static Path poolC;
  static Path poolD;
  static DataTls tlsC;
  static DataTls tlsD;
  static DataServer portC;
  static SnapshotReader readerD;
  static SnapshotReader hostileReader;
  static Server hostileServer;
  static final HostileNode hostile = new HostileNode();

  /** Where node D reaches node C's port: the port itself, or a test's relay in front of it. */
  static volatile String routeToC;

  static String routeToC() {
    return routeToC == null ? portC.endpoint() : routeToC;
  }

  @BeforeAll
  static void twoNodes() throws Exception {
    ca = TestCertificates.ca("soko-data-ca");
    Files.createDirectories(host.xfsPool.resolve("c"));
    Files.createDirectories(host.xfsPool.resolve("d"));
    poolC = btrfsPool("c");
    poolD = btrfsPool("d");
    nodeC = LocalVolumeManager.open(config("node-c", "c", poolC));
    nodeD =
        LocalVolumeManager.open(
            config("node-d", "d", poolD),
            NodeLabels.unknownBecause("not read in this test"),
            new RemoteSnapshots() {
              // Node C holds every snapshot and volume node D does not, the hostile node one.
              @Override
              public Optional<RemoteSnapshot> find(String snapshotId) {
                if (snapshotId.equals(HOSTILE)) {
                  return hostileReader.describe("node-h", "in-process", snapshotId);
                }
                return readerD.describe("node-c", routeToC(), snapshotId);
              }

              @Override
              public Optional<RemoteSnapshot> findVolume(String volumeId) {
                return readerD.describeVolume("node-c", routeToC(), volumeId);
              }
            });
    tlsC = DataTls.load(TestCertificates.directory(host.base.resolve("tls-c"), ca, Roles.NODE));
    tlsD = DataTls.load(TestCertificates.directory(host.base.resolve("tls-d"), ca, Roles.NODE));
    portC = DataServer.start("127.0.0.1:0", tlsC, Served.images(nodeC), "node-c", RpcMetrics.NONE);
    readerD = new SnapshotReader(tlsD);
    hostileServer =
        InProcessServerBuilder.forName("hostile-node").addService(hostile).build().start();
    hostileReader =
        new SnapshotReader(
            endpoint -> InProcessChannelBuilder.forName("hostile-node").build(),
            Duration.ofSeconds(30),
            new Resumes(0, Duration.ofMillis(10)));
  }

  @AfterAll
  static void stop() throws Exception {
    if (hostileServer != null) {
      hostileServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    for (AutoCloseable c :
        new AutoCloseable[] {hostileReader, readerD, portC, tlsC, tlsD, nodeC, nodeD}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // the fixture takes down what is left
      }
    }
  }

  /** A new btrfs with quotas on a loop device, mounted below the fixture; its pool folder. */
  static Path btrfsPool(String name) throws IOException {
    Path disk = host.base.resolve("btrfs-" + name + ".img");
    try (RandomAccessFile file = new RandomAccessFile(disk.toFile(), "rw")) {
      file.setLength(512 * MIB);
    }
    Path mountPoint = Files.createDirectories(host.base.resolve("btrfs-" + name));
    ProcessExec exec = new ProcessExec();
    exec.check(List.of("mkfs.btrfs", "-q", disk.toString()), Exec.LONG);
    exec.check(
        List.of("mount", "-t", "btrfs", new Losetup().attach(disk), mountPoint.toString()),
        Exec.LONG);
    exec.check(List.of("btrfs", "quota", "enable", mountPoint.toString()), Exec.LONG);
    return Files.createDirectories(mountPoint.resolve("pool"));
  }

  static DriverConfig config(String node, String pool, Path folder) {
    PoolConfig.Backend btrfs = PoolConfig.Backend.BTRFS_SUBVOLUME;
    return DriverConfig.node(
        "csi.soko.dev",
        node,
        "unix:///tmp/unused-" + pool + ".sock",
        List.of(
            new PoolConfig(
                pool, folder, 384 * MIB, 1.0, btrfs.fsTypes(), false, false, Map.of(), btrfs),
            new PoolConfig(
                "img-" + pool,
                host.xfsPool.resolve(pool),
                256 * MIB,
                1.0,
                new java.util.LinkedHashSet<>(List.of("ext4")))),
        List.of(host.kubelet),
        8);
  }

  static VolumeRequest request(String name, long bytes, long limit, String pool, ContentSource s) {
    return new VolumeRequest(
        name,
        bytes,
        limit,
        pool,
        dev.soko.driver.model.AccessType.FILESYSTEM,
        "btrfs",
        s,
        Map.of());
  }

  static Path volumeOf(Path pool, String id) {
    return pool.resolve("volumes").resolve(id);
  }

  static void write(Path file, long offset, int length) throws IOException {
    byte[] bytes = new byte[length];
    new Random(offset + length).nextBytes(bytes);
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        channel.write(buffer, offset + buffer.position());
      }
    }
  }

  /**
   * A tree of every kind the copy keeps: nested directories, a file of several chunks, a sparse
   * file, an empty and a tiny (inline) file, relative and absolute symlinks, a hard link, modes
   * with set-user-ID and sticky bits, other owners and set times.
   */
  static void fill(Path root) throws IOException {
    Path deep = Files.createDirectories(root.resolve("a/b/c"));
    write(deep.resolve("data.bin"), 0, (int) (3 * MIB + 17));
    Path sparse = root.resolve("sparse.bin");
    write(sparse, 0, (int) MIB);
    write(sparse, 30 * MIB, (int) MIB);
    try (RandomAccessFile file = new RandomAccessFile(sparse.toFile(), "rw")) {
      file.setLength(40 * MIB);
    }
    Files.createFile(root.resolve("empty"));
    Files.writeString(root.resolve("small.txt"), "hello from node c\n");
    Files.createSymbolicLink(root.resolve("relative"), Path.of("a/b/c/data.bin"));
    Files.createSymbolicLink(root.resolve("absolute"), Path.of("/nowhere/at/all"));
    Files.createLink(root.resolve("a/hard"), deep.resolve("data.bin"));
    Files.setAttribute(root.resolve("small.txt"), "unix:uid", 1234);
    Files.setAttribute(root.resolve("small.txt"), "unix:gid", 5678);
    Files.setAttribute(root.resolve("small.txt"), "unix:mode", 04750);
    Files.setAttribute(root.resolve("a/b"), "unix:mode", 01777);
    Files.setAttribute(root.resolve("a"), "unix:mode", 0700);
    Files.setAttribute(root.resolve("relative"), "unix:uid", 4321, LinkOption.NOFOLLOW_LINKS);
    FileTime then = FileTime.from(Instant.parse("2020-02-03T04:05:06.123456789Z"));
    Files.setLastModifiedTime(deep.resolve("data.bin"), then);
    Files.setLastModifiedTime(deep, then);
  }

  /**
   * Every entry below {@code root} by relative path: kind, size, mode, owner, time, a symlink's
   * target and a file's sha256; never following a link.
   */
  static Map<String, String> tree(Path root) throws Exception {
    Map<String, String> entries = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.toList()) {
        Map<String, Object> a =
            Files.readAttributes(
                p, "unix:mode,uid,gid,size,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
        String what;
        if (Files.isSymbolicLink(p)) {
          what = "link->" + Files.readSymbolicLink(p) + " uid=" + a.get("uid");
        } else {
          what =
              String.format(
                  "mode=%o uid=%s gid=%s mtime=%s",
                  a.get("mode"), a.get("uid"), a.get("gid"), a.get("lastModifiedTime"));
          if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
            what += " size=" + a.get("size") + " sha256=" + SnapshotTransferIT.sha256(p);
          }
        }
        entries.put("/" + root.relativize(p), what);
      }
    }
    return entries;
  }

  static Object inode(Path file) throws IOException {
    return Files.getAttribute(file, "unix:ino", LinkOption.NOFOLLOW_LINKS);
  }

  static List<String> entriesOf(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  static long availableOfD() {
    return nodeD.capacity().stream()
        .filter(p -> p.pool().equals("d"))
        .findFirst()
        .orElseThrow()
        .availableBytes();
  }

  @Test
  void aSnapshotRestoredOnAnotherNodeHasTheSameTreeAndItsSparseFileStaysSparse() throws Exception {
    Volume source = nodeC.createVolume(request("tree", 64 * MIB, 0, "c", ContentSource.EMPTY));
    Path sourceRoot = volumeOf(poolC, source.id());
    fill(sourceRoot);
    Map<String, String> expected = tree(sourceRoot);
    Snapshot snapshot = nodeC.createSnapshot("tree-snap", source.id());

    Volume restored =
        nodeD.createVolume(
            request("tree-on-d", 0, 0, "d", new ContentSource.FromSnapshot(snapshot.id())));

    Path copy = volumeOf(poolD, restored.id());
    assertThat(restored.capacityBytes()).isEqualTo(64 * MIB);
    assertThat(BtrfsTools.limitOf(copy)).as("the claim's limit").isEqualTo("" + 64 * MIB);
    assertThat(tree(copy)).isEqualTo(expected);
    assertThat(inode(copy.resolve("a/hard")))
        .as("a hard link stays one")
        .isEqualTo(inode(copy.resolve("a/b/c/data.bin")));
    long sparse = SnapshotTransferIT.allocated(copy.resolve("sparse.bin"));
    assertThat(sparse)
        .as("only the 2 MiB of data were written")
        .isBetween(2 * MIB, 2 * MIB + 64 * 1024)
        .isEqualTo(SnapshotTransferIT.allocated(sourceRoot.resolve("sparse.bin")));
    nodeD.deleteVolume(restored.id());
    nodeC.deleteSnapshot(snapshot.id());
    nodeC.deleteVolume(source.id());
  }

  @Test
  void aVolumeIsClonedOnAnotherNodeAndItsReadCopyIsGone() throws Exception {
    Volume source = nodeC.createVolume(request("live", 32 * MIB, 0, "c", ContentSource.EMPTY));
    Path sourceRoot = volumeOf(poolC, source.id());
    fill(sourceRoot);
    Map<String, String> expected = tree(sourceRoot);
    long availableOfC = nodeC.capacity().get(0).availableBytes();

    Volume clone =
        nodeD.createVolume(
            request("live-on-d", 0, 0, "d", new ContentSource.FromVolume(source.id())));

    assertThat(clone.capacityBytes()).isEqualTo(32 * MIB);
    assertThat(tree(volumeOf(poolD, clone.id()))).isEqualTo(expected);
    assertThat(entriesOf(poolC.resolve("snapshots")))
        .as("node C's read-only snapshot for the read is gone")
        .noneMatch(name -> name.startsWith("readcopy-"));
    assertThat(nodeC.capacity().get(0).availableBytes()).isEqualTo(availableOfC);
    nodeD.deleteVolume(clone.id());
    nodeC.deleteVolume(source.id());
  }

  @Test
  void aRestoreWhoseStreamIsCutIsReadAgainFromTheStartIntoAnEmptiedSubvolume() throws Exception {
    Volume source = nodeC.createVolume(request("cut", 64 * MIB, 0, "c", ContentSource.EMPTY));
    Path sourceRoot = volumeOf(poolC, source.id());
    fill(sourceRoot);
    write(sourceRoot.resolve("large.bin"), 0, (int) (24 * MIB));
    Map<String, String> expected = tree(sourceRoot);
    Snapshot snapshot = nodeC.createSnapshot("cut-snap", source.id());
    try (CuttingProxy proxy = new CuttingProxy(portC.endpoint())) {
      routeToC = proxy.endpoint();
      proxy.cutAfter(12 * MIB);

      Volume restored =
          nodeD.createVolume(
              request("cut-on-d", 0, 0, "d", new ContentSource.FromSnapshot(snapshot.id())));

      assertThat(tree(volumeOf(poolD, restored.id()))).isEqualTo(expected);
      assertThat(proxy.bytesToReader())
          .as("the bytes before the cut crossed twice: the tree was read again from its start")
          .isGreaterThan(12 * MIB + 27 * MIB);
      nodeD.deleteVolume(restored.id());
    } finally {
      routeToC = null;
      nodeC.deleteSnapshot(snapshot.id());
      nodeC.deleteVolume(source.id());
    }
  }

  @Test
  void aReadCopyLeftByACrashMidReadIsRemovedAtTheNextStart() throws Exception {
    Path pool = btrfsPool("e");
    DriverConfig config = config("node-e", "e", pool);
    Path left;
    try (LocalVolumeManager nodeE = LocalVolumeManager.open(config)) {
      Volume v = nodeE.createVolume(request("crashed", 32 * MIB, 0, "e", ContentSource.EMPTY));
      // What ReadVolumeTree holds while it streams; the process dies before the stream ends.
      nodeE.volumeTree(v.id());
      left = pool.resolve("snapshots").resolve(entriesOf(pool.resolve("snapshots")).get(0));
    }
    assertThat(left.getFileName().toString()).startsWith("readcopy-");
    try (LocalVolumeManager restarted = LocalVolumeManager.open(config)) {
      assertThat(left).as("removed by the restart's recovery").doesNotExist();
      assertThat(
              restarted.capacity().stream()
                  .filter(p -> p.pool().equals("e"))
                  .findFirst()
                  .orElseThrow()
                  .availableBytes())
          .isEqualTo(384 * MIB - 32 * MIB);
    }
  }

  @Test
  void aSourceLargerThanTheClaimsLimitIsRefusedBeforeAnythingIsWritten() throws Exception {
    Volume source = nodeC.createVolume(request("large", 64 * MIB, 0, "c", ContentSource.EMPTY));
    write(volumeOf(poolC, source.id()).resolve("data.bin"), 0, (int) (8 * MIB));
    Snapshot snapshot = nodeC.createSnapshot("large-snap", source.id());
    List<String> before = entriesOf(poolD.resolve("volumes"));
    long available = availableOfD();

    StorageException limited =
        catchThrowableOfType(
            StorageException.class,
            () ->
                nodeD.createVolume(
                    request(
                        "large-on-d",
                        16 * MIB,
                        32 * MIB,
                        "d",
                        new ContentSource.FromSnapshot(snapshot.id()))));
    StorageException noRoom =
        catchThrowableOfType(
            StorageException.class,
            () ->
                nodeD.createVolume(
                    request(
                        "huge-on-d",
                        1024 * MIB,
                        0,
                        "d",
                        new ContentSource.FromSnapshot(snapshot.id()))));

    assertThat(limited.reason()).isEqualTo(Reason.OUT_OF_RANGE);
    assertThat(limited.getMessage()).contains(snapshot.id(), "cannot be limited");
    assertThat(noRoom.reason()).isEqualTo(Reason.RESOURCE_EXHAUSTED);
    assertThat(entriesOf(poolD.resolve("volumes"))).as("no subvolume made").isEqualTo(before);
    assertThat(availableOfD()).isEqualTo(available);
    nodeC.deleteSnapshot(snapshot.id());
    nodeC.deleteVolume(source.id());
  }

  @Test
  void aTreeIsRefusedByAPoolOfImageFiles() throws Exception {
    Volume source = nodeC.createVolume(request("kinds", 32 * MIB, 0, "c", ContentSource.EMPTY));
    Snapshot snapshot = nodeC.createSnapshot("kinds-snap", source.id());
    List<String> before = entriesOf(host.xfsPool.resolve("d"));

    StorageException refused =
        catchThrowableOfType(
            StorageException.class,
            () ->
                nodeD.createVolume(
                    new VolumeRequest(
                        "kinds-on-d",
                        32 * MIB,
                        0,
                        "img-d",
                        dev.soko.driver.model.AccessType.FILESYSTEM,
                        "ext4",
                        new ContentSource.FromSnapshot(snapshot.id()),
                        Map.of())));

    assertThat(refused.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
    assertThat(refused.getMessage())
        .contains(snapshot.id(), "node-c", "tree of files", "pool img-d", "restore it on node");
    assertThat(entriesOf(host.xfsPool.resolve("d"))).isEqualTo(before);
    nodeC.deleteSnapshot(snapshot.id());
    nodeC.deleteVolume(source.id());
  }

  /** Restores the hostile node's snapshot on node D: refused, and nothing of it left. */
  StorageException refusedWithNothingLeft(List<TreeReply> stream, Path outside) throws Exception {
    hostile.stream = stream;
    List<String> before = entriesOf(poolD.resolve("volumes"));
    List<String> poolBefore = entriesOf(poolD);
    long available = availableOfD();

    StorageException refused =
        catchThrowableOfType(
            StorageException.class,
            () ->
                nodeD.createVolume(
                    request("hostile", 0, 0, "d", new ContentSource.FromSnapshot(HOSTILE))));

    assertThat(refused).as("the copy is refused").isNotNull();
    assertThat(entriesOf(poolD.resolve("volumes"))).as("no subvolume left").isEqualTo(before);
    assertThat(entriesOf(poolD)).as("nothing beside the subvolumes").isEqualTo(poolBefore);
    assertThat(nodeD.listVolumes("", 1000).items())
        .extracting(Volume::name)
        .doesNotContain("hostile");
    ProcessExec exec = new ProcessExec();
    // A deleted subvolume's blocks are freed by btrfs's cleaner once the delete is committed.
    exec.check(List.of("btrfs", "filesystem", "sync", poolD.toString()), Exec.LONG);
    exec.check(List.of("btrfs", "subvolume", "sync", poolD.toString()), Exec.LONG);
    exec.check(List.of("btrfs", "filesystem", "sync", poolD.toString()), Exec.LONG);
    assertThat(availableOfD()).as("no space held").isEqualTo(available);
    assertThat(entriesOf(outside)).as("nothing written outside").isEmpty();
    return refused;
  }

  @Test
  void aHostileStreamThatLeavesTheTreeOrWritesThroughALinkIsRefusedWithNothingLeft()
      throws Exception {
    Path outside = Files.createDirectories(host.base.resolve("outside"));

    StorageException dotDot =
        refusedWithNothingLeft(
            List.of(root(), file(0, "../escaped", 5), data(0, "owned"), end(2, 1, 5)), outside);
    StorageException throughLink =
        refusedWithNothingLeft(
            List.of(
                root(),
                symlink(0, "escape", outside.toString()),
                file(1, "written", 5),
                data(0, "owned"),
                end(3, 1, 5)),
            outside);
    StorageException overLink =
        refusedWithNothingLeft(
            List.of(
                root(),
                symlink(0, "escape", outside.resolve("file").toString()),
                file(0, "escape", 5),
                data(0, "owned"),
                end(3, 1, 5)),
            outside);

    assertThat(dotDot.reason()).isEqualTo(Reason.INTERNAL);
    assertThat(dotDot.getMessage()).contains(HOSTILE, "node-h", "../escaped", "not one name");
    assertThat(throughLink.reason()).isEqualTo(Reason.INTERNAL);
    assertThat(throughLink.getMessage()).contains("not a directory");
    assertThat(overLink.reason()).isEqualTo(Reason.INTERNAL);
    assertThat(overLink.getMessage()).contains("names what an earlier entry made");
  }

  @Test
  void aStreamThatOutgrowsTheClaimsLimitIsResourceExhaustedWithNothingLeft() throws Exception {
    Path outside = Files.createDirectories(host.base.resolve("outside-quota"));
    List<TreeReply> stream = new java.util.ArrayList<>();
    stream.add(root());
    long size = 64 * MIB;
    stream.add(file(0, "too-large", size));
    byte[] chunk = new byte[(int) MIB];
    new Random(7).nextBytes(chunk);
    for (long at = 0; at < size; at += MIB) {
      stream.add(data(at, chunk));
    }
    stream.add(end(2, 64, size));

    StorageException full = refusedWithNothingLeft(stream, outside);

    assertThat(full.reason()).isEqualTo(Reason.RESOURCE_EXHAUSTED);
    assertThat(full.getMessage()).contains(HOSTILE, "full");
  }

  // ---- the hostile node's stream ---------------------------------------------------------------

  static TreeReply root() {
    return TreeReply.newBuilder()
        .setEntry(Entry.newBuilder().setKind(Entry.Kind.DIRECTORY).setMode(0755))
        .build();
  }

  static TreeReply file(long parent, String name, long size) {
    return TreeReply.newBuilder()
        .setEntry(
            Entry.newBuilder()
                .setParent(parent)
                .setName(name)
                .setKind(Entry.Kind.REGULAR)
                .setMode(0644)
                .setSizeBytes(size))
        .build();
  }

  static TreeReply symlink(long parent, String name, String target) {
    return TreeReply.newBuilder()
        .setEntry(
            Entry.newBuilder()
                .setParent(parent)
                .setName(name)
                .setKind(Entry.Kind.SYMLINK)
                .setSymlinkTarget(target))
        .build();
  }

  static TreeReply data(long offset, String text) {
    return data(offset, text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  static TreeReply data(long offset, byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    return TreeReply.newBuilder()
        .setData(
            FileData.newBuilder()
                .setOffset(offset)
                .setData(ByteString.copyFrom(bytes))
                .setCrc32C((int) crc.getValue()))
        .build();
  }

  static TreeReply end(long entries, long chunks, long bytes) {
    return TreeReply.newBuilder()
        .setEnd(TreeEnd.newBuilder().setEntries(entries).setChunks(chunks).setDataBytes(bytes))
        .build();
  }

  /** A node that describes one 16 MiB btrfs snapshot and streams whatever the test set. */
  static final class HostileNode extends SnapshotDataGrpc.SnapshotDataImplBase {
    volatile List<TreeReply> stream = List.of();

    @Override
    public void describe(SnapshotRef request, StreamObserver<SnapshotFacts> observer) {
      observer.onNext(
          SnapshotFacts.newBuilder()
              .setSnapshotId(request.getSnapshotId())
              .setSizeBytes(16 * MIB)
              .setAccessType(AccessType.MOUNT)
              .setFsType("btrfs")
              .setNode("node-h")
              .setForm(Form.FORM_FILE_TREE)
              .build());
      observer.onCompleted();
    }

    @Override
    public void readTree(SnapshotRef request, StreamObserver<TreeReply> observer) {
      stream.forEach(observer::onNext);
      observer.onCompleted();
    }
  }
}

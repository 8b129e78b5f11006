package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import csi.v1.Csi;
import csi.v1.SnapshotMetadataGrpc;
import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.data.v1.DataProto.ReadRequest;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.report.SnapshotHomes.Home;
import dev.soko.driver.transfer.DataServer.Served;
import dev.soko.driver.volume.HostFixture;
import dev.soko.driver.volume.LocalVolumeManager;
import dev.soko.driver.volume.PublishRequest;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.RemoteSnapshots;
import dev.soko.driver.volume.StageRequest;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.StorageException.Reason;
import dev.soko.driver.volume.VolumeRequest;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The data path between two nodes' data ports on loopback, in front of real pools (root, loop
 * devices): node A's engine holds block volumes written through their loop devices and snapshotted
 * on an XFS pool; node B's reader copies them through Describe and Read over mutual TLS with
 * certificates made here; the controller's relay answers SnapshotMetadata calls from node A's port.
 * Node B's engine clones node A's mounted volumes through DescribeVolume and ReadVolume.
 */
class SnapshotTransferIT {
  static final long MIB = HostFixture.MIB;
  static final long K = 4096;

  @RegisterExtension static final HostFixture host = new HostFixture();

  static TestCertificates.Ca ca;
  static LocalVolumeManager nodeA;
  static LocalVolumeManager nodeB;
  static DataTls tlsA;
  static DataTls tlsB;
  static DataServer portA;
  static DataServer portB;
  static SnapshotReader readerB;

  /** Where node B reaches node A's port: the port itself, or a test's relay in front of it. */
  static volatile String routeToA;

  @BeforeAll
  static void twoNodes() throws Exception {
    ca = TestCertificates.ca("soko-data-ca");
    nodeA = host.open();
    nodeB =
        SecondNode.open(
            host,
            "node-b",
            "b",
            new RemoteSnapshots() {
              // Node A holds every snapshot and volume node B does not: as the locator finds them.
              @Override
              public Optional<RemoteSnapshot> find(String snapshotId) {
                return readerB.describe("node-a", routeToA(), snapshotId);
              }

              @Override
              public Optional<RemoteSnapshot> findVolume(String volumeId) {
                return readerB.describeVolume("node-a", routeToA(), volumeId);
              }
            });
    tlsA = DataTls.load(TestCertificates.directory(host.base.resolve("tls-a"), ca, Roles.NODE));
    tlsB = DataTls.load(TestCertificates.directory(host.base.resolve("tls-b"), ca, Roles.NODE));
    portA =
        DataServer.start(
            "127.0.0.1:0",
            tlsA,
            new Served(nodeA, nodeA, null, DriverConfig.DEFAULT_DATA_MAX_READS),
            "node-a",
            RpcMetrics.NONE);
    portB = DataServer.start("127.0.0.1:0", tlsB, Served.images(nodeB), "node-b", RpcMetrics.NONE);
    readerB = new SnapshotReader(tlsB);
  }

  static String routeToA() {
    return routeToA == null ? portA.endpoint() : routeToA;
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : new AutoCloseable[] {readerB, portA, portB, tlsA, tlsB, nodeA, nodeB}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // the fixture takes down what is left
      }
    }
  }

  /** A block volume of node A, published, with its device's path. */
  static Path blockVolume(String name, long bytes) {
    Volume v =
        nodeA.createVolume(
            new VolumeRequest(
                name, bytes, 0, "xfs", AccessType.BLOCK, "", ContentSource.EMPTY, Map.of()));
    Path staging = host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
    Path target = host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/dev");
    nodeA.stage(new StageRequest(v.id(), staging, v.accessType(), "", List.of()));
    nodeA.publish(new PublishRequest(v.id(), staging, target, false, v.accessType(), List.of()));
    return target;
  }

  static String volumeId(String name) {
    return nodeA.listVolumes("", 1000).items().stream()
        .filter(v -> v.name().equals(name))
        .findFirst()
        .orElseThrow()
        .id();
  }

  static void write(Path device, long offset, int length) throws IOException {
    byte[] bytes = new byte[length];
    new Random(offset).nextBytes(bytes);
    try (FileChannel channel = FileChannel.open(device, StandardOpenOption.WRITE)) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        channel.write(buffer, offset + buffer.position());
      }
      channel.force(true);
    }
  }

  static String sha256(Path file) throws Exception {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buffer = new byte[1 << 20];
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  /** The bytes the file's blocks take on disk. */
  static long allocated(Path file) {
    String blocks =
        new ProcessExec()
            .check(List.of("stat", "-c", "%b", file.toString()), Exec.SHORT)
            .stdout()
            .trim();
    return Long.parseLong(blocks) * 512;
  }

  /**
   * Size and modification time of each file of the pool that a read could touch: its records and
   * snapshot images. Volume images are left out: other tests' volumes stay mounted, and their
   * filesystems write back in the background.
   */
  static Map<String, String> poolFiles(Path pool) throws IOException {
    Map<String, String> files = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(pool)) {
      for (Path p :
          walk.filter(Files::isRegularFile).filter(p -> !isVolumeImage(pool, p)).toList()) {
        files.put(p.toString(), Files.size(p) + "@" + Files.getLastModifiedTime(p).toMillis());
      }
    }
    return files;
  }

  private static boolean isVolumeImage(Path pool, Path file) {
    return file.getParent().equals(pool.resolve("images"));
  }

  @Test
  void aBlockSnapshotIsCopiedToAnotherNodeAsItsBytesWithItsHolesKept() throws Exception {
    Path device = blockVolume("moved", 256 * MIB);
    write(device, 0, (int) (MIB + K));
    write(device, 100 * MIB, (int) K);
    write(device, 200 * MIB, (int) (3 * MIB));
    Snapshot snapshot = nodeA.createSnapshot("moved-snap", volumeId("moved"));
    Path source = nodeA.snapshotSource(snapshot.id()).path();
    Map<String, String> before = poolFiles(host.xfsPool);

    RemoteSnapshot remote =
        readerB.describe("node-a", portA.endpoint(), snapshot.id()).orElseThrow();
    Path copy = host.base.resolve("copy.img");
    remote.copyTo(copy);

    assertThat(remote.sizeBytes()).isEqualTo(256 * MIB);
    assertThat(remote.accessType()).isEqualTo(AccessType.BLOCK);
    assertThat(remote.fsType()).isEmpty();
    assertThat(Files.size(copy)).isEqualTo(256 * MIB);
    assertThat(sha256(copy)).isEqualTo(sha256(source));
    // Only the data travelled and was written: the copy is as sparse as its source.
    assertThat(allocated(copy)).isBetween(allocated(source) - MIB, allocated(source) + MIB);
    assertThat(allocated(copy)).isLessThan(8 * MIB);
    assertThat(poolFiles(host.xfsPool)).isEqualTo(before);
    // Node B holds no such snapshot, and says so.
    assertThat(readerB.describe("node-b", portB.endpoint(), snapshot.id())).isEmpty();
  }

  /** A mounted ext4 volume of node A of 64 MiB holding a file of {@code bytes}, with its path. */
  static Path mountedVolume(String name, int bytes) throws IOException {
    Volume v =
        nodeA.createVolume(
            new VolumeRequest(
                name,
                64 * MIB,
                0,
                "xfs",
                AccessType.FILESYSTEM,
                "ext4",
                ContentSource.EMPTY,
                Map.of()));
    Path staging = host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
    Path target = host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/mount");
    nodeA.stage(new StageRequest(v.id(), staging, v.accessType(), "ext4", List.of()));
    nodeA.publish(new PublishRequest(v.id(), staging, target, false, v.accessType(), List.of()));
    Path file = target.resolve("data.bin");
    Files.createFile(file);
    write(file, 0, bytes);
    return file;
  }

  /**
   * The read copies in node A's pool: none once every read has ended. Listed by name only: a copy
   * removed while the folder is read must not fail the listing, as a walk's stat of it would.
   */
  static List<Path> readCopiesOfA() throws IOException {
    try (Stream<Path> files = Files.list(host.xfsPool.resolve("snapshots"))) {
      return files.filter(p -> p.getFileName().toString().startsWith("readcopy-")).toList();
    }
  }

  static long availableOfA() {
    return nodeA.capacity().stream()
        .filter(p -> p.pool().equals("xfs"))
        .findFirst()
        .orElseThrow()
        .availableBytes();
  }

  @Test
  void aMountedVolumeIsClonedOnAnotherNodeWithItsFileAndNoCopyIsLeftBehind() throws Exception {
    Path file = mountedVolume("live", (int) (24 * MIB));
    String expected = sha256(file);
    long available = availableOfA();

    Volume clone =
        nodeB.createVolume(
            new VolumeRequest(
                "live-clone",
                32 * MIB,
                0,
                "b",
                AccessType.FILESYSTEM,
                "ext4",
                new ContentSource.FromVolume(volumeId("live")),
                Map.of()));

    assertThat(clone.capacityBytes()).as("as large as its source").isEqualTo(64 * MIB);
    assertThat(readCopiesOfA()).as("the read copy is gone").isEmpty();
    assertThat(availableOfA()).as("its space given back").isEqualTo(available);
    Path staging = host.kubelet.resolve("plugins/csi.soko.dev/staging/live-clone");
    nodeB.stage(new StageRequest(clone.id(), staging, AccessType.FILESYSTEM, "ext4", List.of()));
    try {
      assertThat(sha256(staging.resolve("data.bin")))
          .as("the file written on node A reads the same on node B")
          .isEqualTo(expected);
    } finally {
      nodeB.unstage(clone.id(), staging);
    }
  }

  @Test
  void aReadOfAVolumeCancelledMidStreamLeavesNoCopy() throws Exception {
    mountedVolume("cancelled", (int) (24 * MIB));
    ManagedChannel channel =
        NettyChannelBuilder.forTarget(portA.endpoint(), tlsB.channelCredentials())
            .maxInboundMessageSize(SnapshotReader.MAX_REPLY_BYTES)
            .build();
    Context.CancellableContext call = Context.current().withCancellation();
    try {
      call.run(
          () -> {
            Iterator<ReadReply> read =
                SnapshotDataGrpc.newBlockingStub(channel)
                    .readVolume(VolumeRef.newBuilder().setVolumeId(volumeId("cancelled")).build());
            read.next();
            read.next();
          });
      assertThat(readCopiesOfA()).as("the copy exists while it is read").hasSize(1);

      call.cancel(null);

      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!readCopiesOfA().isEmpty() && System.nanoTime() < until) {
        Thread.sleep(20);
      }
      assertThat(readCopiesOfA()).as("removed once the reader cancelled").isEmpty();
    } finally {
      channel.shutdownNow();
    }
  }

  @Test
  void aCopyLeftByACrashMidReadIsRemovedAtTheNextStart() throws Exception {
    Path pool = Files.createDirectories(host.base.resolve("pool-crash"));
    DriverConfig config =
        DriverConfig.node(
            "csi.soko.dev",
            "node-c",
            "unix:///tmp/unused-c.sock",
            List.of(new PoolConfig("c", pool, 512 * MIB, 1.0, new LinkedHashSet<>(List.of("xfs")))),
            List.of(host.kubelet),
            8);
    Path left;
    try (LocalVolumeManager nodeC = LocalVolumeManager.open(config)) {
      Volume v =
          nodeC.createVolume(
              new VolumeRequest(
                  "crashed",
                  64 * MIB,
                  0,
                  "c",
                  AccessType.BLOCK,
                  "",
                  ContentSource.EMPTY,
                  Map.of()));
      // What ReadVolume holds while it streams; the process dies before the stream ends.
      left = nodeC.readCopy(v.id()).path();
    }
    assertThat(left).exists();
    try (LocalVolumeManager restarted = LocalVolumeManager.open(config)) {
      assertThat(left).as("removed by the restart's recovery").doesNotExist();
      assertThat(restarted.capacity().get(0).availableBytes()).isEqualTo(512 * MIB - 64 * MIB);
    }
  }

  @Test
  void callersWithoutACertificateOfTheCaOrOfARoleAreRefused() throws Exception {
    TestCertificates.Ca stranger = TestCertificates.ca("soko-data-ca");
    try (DataTls strangerTls =
            DataTls.load(
                TestCertificates.directory(host.base.resolve("tls-x"), stranger, Roles.NODE, ca));
        DataTls userTls =
            DataTls.load(
                TestCertificates.directory(host.base.resolve("tls-u"), ca, "backup-tool"));
        SnapshotReader strangers = new SnapshotReader(strangerTls);
        SnapshotReader users = new SnapshotReader(userTls)) {
      StorageException refused =
          catchThrowableOfType(
              StorageException.class,
              () -> strangers.describe("node-a", portA.endpoint(), "snap-unknown"));
      StorageException denied =
          catchThrowableOfType(
              StorageException.class,
              () -> users.describe("node-a", portA.endpoint(), "snap-unknown"));

      assertThat(refused.reason()).isEqualTo(Reason.UNAVAILABLE);
      assertThat(refused.getMessage()).contains("node-a", portA.endpoint());
      assertThat(denied.reason()).isEqualTo(Reason.FAILED_PRECONDITION);
      assertThat(denied.getMessage()).contains("backup-tool", "may not call");
    }
    assertThat(readerB.describe("node-a", portA.endpoint(), "snap-unknown")).isEmpty();
  }

  @Test
  void aPortStoppedMidStreamFailsTheCopy() throws Exception {
    Path device = blockVolume("cut", 128 * MIB);
    for (long at = 0; at < 64 * MIB; at += 8 * MIB) {
      write(device, at, (int) (8 * MIB));
    }
    Snapshot snapshot = nodeA.createSnapshot("cut-snap", volumeId("cut"));
    DataServer port =
        DataServer.start("127.0.0.1:0", tlsA, Served.images(nodeA), "node-a", RpcMetrics.NONE);
    Function<String, ManagedChannel> dial =
        endpoint ->
            new HookedChannel(
                NettyChannelBuilder.forTarget(endpoint, tlsB.channelCredentials())
                    .maxInboundMessageSize(SnapshotReader.MAX_REPLY_BYTES)
                    .build(),
                2,
                port::close);
    try (SnapshotReader reader =
        new SnapshotReader(dial, Duration.ofSeconds(30), new Resumes(2, Duration.ofMillis(50)))) {
      RemoteSnapshot remote =
          reader.describe("node-a", port.endpoint(), snapshot.id()).orElseThrow();

      StorageException cut =
          catchThrowableOfType(
              StorageException.class, () -> remote.copyTo(host.base.resolve("cut.img")));

      assertThat(cut.reason()).isEqualTo(Reason.UNAVAILABLE);
      assertThat(cut.getMessage()).contains(snapshot.id(), "node-a", port.endpoint());
    }
  }

  /**
   * A snapshot of a block volume of node A holding {@code data} bytes from its start; the volume is
   * deleted once snapshotted, so that only the snapshot takes room in node A's pool.
   */
  static Snapshot blockSnapshot(String name, long bytes, long data) throws IOException {
    Path device = blockVolume(name, bytes);
    for (long at = 0; at < data; at += 8 * MIB) {
      write(device, at, (int) Math.min(8 * MIB, data - at));
    }
    String id = volumeId(name);
    Snapshot snapshot = nodeA.createSnapshot(name + "-snap", id);
    nodeA.unpublish(id, device);
    nodeA.unstage(id, host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name));
    nodeA.deleteVolume(id);
    return snapshot;
  }

  static VolumeRequest restoreOnB(String name, Snapshot snapshot) {
    return new VolumeRequest(
        name,
        snapshot.sizeBytes(),
        0,
        "b",
        AccessType.BLOCK,
        "",
        new ContentSource.FromSnapshot(snapshot.id()),
        Map.of());
  }

  static List<String> imagesOfB() throws IOException {
    try (Stream<Path> files = Files.list(host.base.resolve("pool-b").resolve("images"))) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void aRestoreWhoseConnectionIsCutMidStreamGoesOnFromWhatArrived() throws Exception {
    long data = 48 * MIB;
    Snapshot snapshot = blockSnapshot("resumed", 64 * MIB, data);
    String expected = sha256(nodeA.snapshotSource(snapshot.id()).path());
    try (CuttingProxy proxy = new CuttingProxy(portA.endpoint())) {
      routeToA = proxy.endpoint();
      proxy.cutAfter(16 * MIB);

      Volume restored = nodeB.createVolume(restoreOnB("resumed-on-b", snapshot));

      Path image = host.base.resolve("pool-b").resolve("images").resolve(restored.id() + ".img");
      assertThat(sha256(image)).isEqualTo(expected);
      // Read again from the start, the 16 MiB before the cut would have crossed twice.
      assertThat(proxy.bytesToReader())
          .as("the snapshot's data crossed about once")
          .isBetween(data, data + 6 * MIB);
      nodeB.deleteVolume(restored.id());
    } finally {
      routeToA = null;
      nodeA.deleteSnapshot(snapshot.id());
    }
  }

  @Test
  void aRestoreFromANodeThatStaysUnreachableLeavesNothingAndALaterTrySucceeds() throws Exception {
    Snapshot snapshot = blockSnapshot("unreached", 32 * MIB, 16 * MIB);
    String expected = sha256(nodeA.snapshotSource(snapshot.id()).path());
    List<String> before = imagesOfB();
    long available = nodeB.capacity().get(0).availableBytes();
    try (CuttingProxy proxy = new CuttingProxy(portA.endpoint())) {
      routeToA = proxy.endpoint();
      proxy.cutAfter(4 * MIB, true);

      StorageException unreachable =
          catchThrowableOfType(
              StorageException.class,
              () -> nodeB.createVolume(restoreOnB("unreached-on-b", snapshot)));

      assertThat(unreachable.reason()).isEqualTo(Reason.UNAVAILABLE);
      assertThat(unreachable.getMessage()).contains(snapshot.id(), "node-a", proxy.endpoint());
      assertThat(imagesOfB()).as("no partial image").isEqualTo(before);
      assertThat(nodeB.listVolumes("", 1000).items())
          .extracting(Volume::name)
          .doesNotContain("unreached-on-b");
      assertThat(nodeB.capacity().get(0).availableBytes()).isEqualTo(available);

      proxy.refuse(false);
      // As the provisioner does: the same request again until the node answers.
      Volume restored = null;
      long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (restored == null) {
        try {
          restored = nodeB.createVolume(restoreOnB("unreached-on-b", snapshot));
        } catch (StorageException e) {
          assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE);
          assertThat(System.nanoTime()).as("node A answers again within 60 s").isLessThan(until);
          Thread.sleep(500);
        }
      }
      Path image = host.base.resolve("pool-b").resolve("images").resolve(restored.id() + ".img");
      assertThat(sha256(image)).isEqualTo(expected);
      nodeB.deleteVolume(restored.id());
    } finally {
      routeToA = null;
      nodeA.deleteSnapshot(snapshot.id());
    }
  }

  @Test
  void aBtrfsSubvolumeIsDescribedAsATreeOfFilesAndItsImageIsNotRead() throws Exception {
    Path disk = host.base.resolve("btrfs.img");
    try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(disk.toFile(), "rw")) {
      file.setLength(512 * MIB);
    }
    Path mountPoint = Files.createDirectories(host.base.resolve("btrfs"));
    ProcessExec exec = new ProcessExec();
    exec.check(List.of("mkfs.btrfs", "-q", disk.toString()), Exec.LONG);
    exec.check(
        List.of("mount", "-t", "btrfs", new Losetup().attach(disk), mountPoint.toString()),
        Exec.LONG);
    exec.check(List.of("btrfs", "quota", "enable", mountPoint.toString()), Exec.LONG);
    Path pool = Files.createDirectories(mountPoint.resolve("pool"));
    PoolConfig.Backend btrfs = PoolConfig.Backend.BTRFS_SUBVOLUME;
    DriverConfig config =
        DriverConfig.node(
            "csi.soko.dev",
            "node-c",
            "unix:///tmp/unused-c.sock",
            List.of(
                new PoolConfig(
                    "subvols",
                    pool,
                    256 * MIB,
                    1.0,
                    btrfs.fsTypes(),
                    false,
                    false,
                    Map.of(),
                    btrfs)),
            List.of(host.kubelet),
            8);
    try (LocalVolumeManager nodeC = LocalVolumeManager.open(config);
        DataServer portC =
            DataServer.start(
                "127.0.0.1:0", tlsA, Served.images(nodeC), "node-c", RpcMetrics.NONE)) {
      Volume v =
          nodeC.createVolume(
              new VolumeRequest(
                  "sub",
                  64 * MIB,
                  0,
                  "subvols",
                  AccessType.FILESYSTEM,
                  "",
                  ContentSource.EMPTY,
                  Map.of()));
      Snapshot snapshot = nodeC.createSnapshot("sub-snap", v.id());

      RemoteSnapshot described =
          readerB.describe("node-c", portC.endpoint(), snapshot.id()).orElseThrow();
      RemoteSnapshot volume =
          readerB.describeVolume("node-c", portC.endpoint(), v.id()).orElseThrow();
      ManagedChannel channel =
          NettyChannelBuilder.forTarget(portC.endpoint(), tlsB.channelCredentials()).build();
      try {
        StatusRuntimeException imageRead =
            catchThrowableOfType(
                StatusRuntimeException.class,
                () ->
                    SnapshotDataGrpc.newBlockingStub(channel)
                        .read(ReadRequest.newBuilder().setSnapshotId(snapshot.id()).build())
                        .next());
        StatusRuntimeException volumeRead =
            catchThrowableOfType(
                StatusRuntimeException.class,
                () ->
                    SnapshotDataGrpc.newBlockingStub(channel)
                        .readVolume(VolumeRef.newBuilder().setVolumeId(v.id()).build())
                        .next());

        assertThat(described.form()).isEqualTo(CopyForm.FILE_TREE);
        assertThat(described.fsType()).isEqualTo("btrfs");
        assertThat(volume.form()).isEqualTo(CopyForm.FILE_TREE);
        assertThat(volume.sizeBytes()).isEqualTo(64 * MIB);
        assertThat(imageRead.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(imageRead.getStatus().getDescription())
            .contains(snapshot.id(), "subvols", "ReadTree");
        assertThat(volumeRead.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(volumeRead.getStatus().getDescription())
            .contains(v.id(), "subvols", "trees of files");
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  void theControllersRelayAnswersADeltaWithExactlyTheBlocksWrittenOnTheNode() throws Exception {
    Path device = blockVolume("relayed", 1024 * MIB);
    write(device, 0, (int) (8 * MIB));
    Snapshot a = nodeA.createSnapshot("relayed-a", volumeId("relayed"));
    long[] written = {100 * MIB, 300 * MIB + K, 700 * MIB + 5 * K};
    for (long offset : written) {
      write(device, offset, (int) K);
    }
    Snapshot b = nodeA.createSnapshot("relayed-b", volumeId("relayed"));
    Csi.GetMetadataDeltaRequest delta =
        Csi.GetMetadataDeltaRequest.newBuilder()
            .setBaseSnapshotId(a.id())
            .setTargetSnapshotId(b.id())
            .setMaxResults(1)
            .build();
    try (DataTls controllerTls =
            DataTls.load(
                TestCertificates.directory(
                    host.base.resolve("tls-controller"), ca, Roles.CONTROLLER));
        SnapshotMetadataRelay relay =
            new SnapshotMetadataRelay(
                id -> Optional.of(new Home("node-a", portA.endpoint())), controllerTls)) {
      Server front = InProcessServerBuilder.forName("relay-it").addService(relay).build().start();
      ManagedChannel channel = InProcessChannelBuilder.forName("relay-it").build();
      try {
        List<Csi.BlockMetadata> ranges = new ArrayList<>();
        SnapshotMetadataGrpc.newBlockingStub(channel)
            .getMetadataDelta(delta)
            .forEachRemaining(
                reply -> {
                  assertThat(reply.getVolumeCapacityBytes()).isEqualTo(1024 * MIB);
                  ranges.addAll(reply.getBlockMetadataList());
                });

        assertThat(ranges)
            .extracting(Csi.BlockMetadata::getByteOffset, Csi.BlockMetadata::getSizeBytes)
            .containsExactly(tuple(written[0], K), tuple(written[1], K), tuple(written[2], K));
      } finally {
        channel.shutdownNow();
        front.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    // A node's certificate may not ask a port for block metadata: only the controller relays it.
    ManagedChannel asNode =
        NettyChannelBuilder.forTarget(portA.endpoint(), tlsB.channelCredentials()).build();
    try {
      StatusRuntimeException refused =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () -> SnapshotMetadataGrpc.newBlockingStub(asNode).getMetadataDelta(delta).next());
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    } finally {
      asNode.shutdownNow();
    }
  }
}

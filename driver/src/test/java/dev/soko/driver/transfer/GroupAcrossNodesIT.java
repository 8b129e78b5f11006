package dev.soko.driver.transfer;

import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.transfer.DataServer.Served;
import dev.soko.driver.volume.HostFixture;
import dev.soko.driver.volume.LocalVolumeManager;
import dev.soko.driver.volume.PublishRequest;
import dev.soko.driver.volume.SnapshotBlocks;
import dev.soko.driver.volume.SnapshotFilter;
import dev.soko.driver.volume.SpanningGroupId;
import dev.soko.driver.volume.StageRequest;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.StorageException.Reason;
import dev.soko.driver.volume.VolumeRequest;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A group snapshot across two nodes in one JVM, on real pools, loop devices and mounts (root): node
 * A (the fixture's node-it, an XFS pool) and node B (a pool of its own) each hold a mounted volume
 * and serve their data ports with node certificates; the controller's coordinator takes the group
 * through those ports with its own certificate, over real mutual TLS, and fsfreeze really freezes.
 */
class GroupAcrossNodesIT {
  static final String A = "node-it";
  static final String B = "node-b";

  @RegisterExtension static final HostFixture host = new HostFixture();

  static TestCertificates.Ca ca;
  static LocalVolumeManager nodeA;
  static LocalVolumeManager nodeB;
  static final List<AutoCloseable> closing = new ArrayList<>();
  static Map<String, LocalVolumeManager> engines;
  static Map<String, String> endpoints;
  static GroupPartLinks links;
  static GroupCoordinator coordinator;

  @BeforeAll
  static void twoNodesAndTheController() throws Exception {
    ca = TestCertificates.ca("soko-data-ca");
    nodeA = host.open();
    nodeB = SecondNode.open(host, B, "b");
    DataTls tlsA =
        DataTls.load(TestCertificates.directory(host.base.resolve("g-tls-a"), ca, Roles.NODE));
    DataTls tlsB =
        DataTls.load(TestCertificates.directory(host.base.resolve("g-tls-b"), ca, Roles.NODE));
    DataTls controller =
        DataTls.load(
            TestCertificates.directory(host.base.resolve("g-tls-c"), ca, Roles.CONTROLLER));
    DataServer portA = port(tlsA, nodeA, nodeA, A);
    DataServer portB = port(tlsB, nodeB, null, B);
    engines = Map.of(A, nodeA, B, nodeB);
    endpoints =
        new java.util.concurrent.ConcurrentHashMap<>(
            Map.of(A, portA.endpoint(), B, portB.endpoint()));
    links =
        new GroupPartLinks(
            node -> {
              String endpoint = endpoints.get(node);
              if (endpoint == null) {
                throw new StorageException(Reason.UNAVAILABLE, "node " + node + " is gone");
              }
              return endpoint;
            },
            controller);
    coordinator =
        new GroupCoordinator(
            links, (node, id) -> engines.get(node).deleteGroupSnapshot(id, List.of()));
    closing.addAll(List.of(links, portA, portB, tlsA, tlsB, controller, nodeA, nodeB));
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : closing) {
      try {
        c.close();
      } catch (Exception e) {
        // the fixture takes down what is left
      }
    }
  }

  /**
   * {@code node}'s data port, serving its group parts; {@code blocks} null for no block metadata.
   */
  static DataServer port(DataTls tls, LocalVolumeManager node, SnapshotBlocks blocks, String name)
      throws IOException {
    Served served = new Served(node, blocks, node, DriverConfig.DEFAULT_DATA_MAX_READS);
    return DataServer.start("127.0.0.1:0", tls, served, name, RpcMetrics.NONE);
  }

  static Path staging(String name) {
    return host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
  }

  static Path target(String name) {
    return host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/mount");
  }

  /** A filesystem volume staged and published on {@code engine}: a pod's mounted claim. */
  static Volume mounted(LocalVolumeManager engine, String name, String fsType, long bytes) {
    Volume v =
        engine.createVolume(
            new VolumeRequest(
                name, bytes, 0, "", AccessType.FILESYSTEM, fsType, ContentSource.EMPTY, Map.of()));
    engine.stage(new StageRequest(v.id(), staging(name), v.accessType(), "", List.of()));
    engine.publish(
        new PublishRequest(v.id(), staging(name), target(name), false, v.accessType(), List.of()));
    return v;
  }

  /** A raw block volume attached to a pod: nothing can freeze it. */
  static Volume attachedBlock(LocalVolumeManager engine, String name) {
    Volume v =
        engine.createVolume(
            new VolumeRequest(
                name, 8 * MIB, 0, "", AccessType.BLOCK, "", ContentSource.EMPTY, Map.of()));
    Path device = host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/dev");
    engine.stage(new StageRequest(v.id(), staging(name), v.accessType(), "", List.of()));
    engine.publish(
        new PublishRequest(v.id(), staging(name), device, false, v.accessType(), List.of()));
    return v;
  }

  /** A synced write that fails the test, rather than hang it, on a filesystem left frozen. */
  static void write(Path file, String text) throws Exception {
    write(file, text, Duration.ofSeconds(5));
  }

  static void write(Path file, String text, Duration within) throws Exception {
    CompletableFuture.runAsync(
            () -> {
              try (FileChannel channel =
                  FileChannel.open(
                      file,
                      StandardOpenOption.CREATE,
                      StandardOpenOption.WRITE,
                      StandardOpenOption.TRUNCATE_EXISTING)) {
                channel.write(java.nio.ByteBuffer.wrap(text.getBytes()));
                channel.force(true);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            })
        .get(within.toMillis(), TimeUnit.MILLISECONDS);
  }

  static Map<String, List<String>> byNode(Volume onA, Volume onB) {
    Map<String, List<String>> byNode = new LinkedHashMap<>();
    byNode.put(A, List.of(onA.id()));
    byNode.put(B, List.of(onB.id()));
    return byNode;
  }

  static void assertNoSnapshotOnEitherNode() {
    assertThat(nodeA.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
    assertThat(nodeB.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
  }

  /**
   * Removes a test's volume. Called from a finally block, so a failure here is logged rather than
   * thrown: it would hide the test's own failure, the one that explains it.
   */
  static void teardown(LocalVolumeManager engine, Volume v, Path published) {
    try {
      engine.unpublish(v.id(), published);
      engine.unstage(v.id(), staging(v.name()));
      engine.deleteVolume(v.id());
    } catch (RuntimeException e) {
      System.err.println("cannot remove volume " + v.name() + " after the test: " + e);
    }
  }

  @Test
  void aGroupAcrossTwoNodesHasAPartOnEachThatItsIdFindsAndDeletes() throws Exception {
    Volume data = mounted(nodeA, "ga-data", "xfs", 300 * MIB);
    Volume log = mounted(nodeB, "gb-log", "ext4", 32 * MIB);
    try {
      write(target("ga-data").resolve("table"), "row 1");
      write(target("gb-log").resolve("wal"), "commit 1");

      GroupSnapshot group = coordinator.take("group-1", byNode(data, log));

      SpanningGroupId id = SpanningGroupId.tryParse(group.id()).orElseThrow();
      assertThat(id.nodes()).containsExactly(B, A);
      assertThat(group.id().length()).isLessThanOrEqualTo(128);
      assertThat(group.readyToUse()).isTrue();
      assertThat(group.members())
          .extracting(Snapshot::sourceVolumeId)
          .containsExactlyInAnyOrder(data.id(), log.id());
      // Each node holds its own part, lists its member under the whole group's ID, and finds the
      // part by that ID alone (what Get and Delete are given after a controller restart).
      for (LocalVolumeManager node : List.of(nodeA, nodeB)) {
        assertThat(node.listSnapshots(SnapshotFilter.ALL, "", 0).items())
            .singleElement()
            .satisfies(s -> assertThat(s.groupSnapshotId()).isEqualTo(group.id()));
        assertThat(node.getGroupSnapshot(group.id(), List.of()).id()).isEqualTo(group.id());
      }
      List<String> parts = new ArrayList<>();
      id.nodes()
          .forEach(
              node ->
                  engines.get(node).getGroupSnapshot(group.id(), List.of()).members().stream()
                      .map(Snapshot::id)
                      .forEach(parts::add));
      assertThat(parts)
          .containsExactlyInAnyOrderElementsOf(group.members().stream().map(Snapshot::id).toList());
      // Both thawed: the pods' writes go on.
      write(target("ga-data").resolve("table"), "row 2");
      write(target("gb-log").resolve("wal"), "commit 2");

      // A retry by name answers the same group and makes no second set of parts.
      GroupSnapshot again = coordinator.take("group-1", byNode(data, log));
      assertThat(again.id()).isEqualTo(group.id());
      assertThat(nodeA.listSnapshots(SnapshotFilter.ALL, "", 0).items()).hasSize(1);
      assertThat(nodeB.listSnapshots(SnapshotFilter.ALL, "", 0).items()).hasSize(1);

      id.nodes().forEach(node -> engines.get(node).deleteGroupSnapshot(group.id(), List.of()));
      assertNoSnapshotOnEitherNode();
    } finally {
      teardown(nodeA, data, target("ga-data"));
      teardown(nodeB, log, target("gb-log"));
    }
  }

  @Test
  void aFreezeOneNodeRefusesLeavesNothingOnEitherNodeAndBothThawed() throws Exception {
    Volume data = mounted(nodeA, "ra-data", "xfs", 300 * MIB);
    Volume raw = attachedBlock(nodeB, "rb-raw");
    Path device = host.kubelet.resolve("pods/pod-rb-raw/volumes/rb-raw/dev");
    try {
      assertThatThrownBy(() -> coordinator.take("group-2", byNode(data, raw)))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.FAILED_PRECONDITION))
          .hasMessageContaining("node " + B + " refused")
          .hasMessageContaining("raw block volume in use");
      assertNoSnapshotOnEitherNode();
      write(target("ra-data").resolve("table"), "still writable");
    } finally {
      teardown(nodeA, data, target("ra-data"));
      teardown(nodeB, raw, device);
    }
  }

  @Test
  void aNodeNotReachedFailsTheGroupUnavailableNamingItAndTheOtherThaws() throws Exception {
    Volume data = mounted(nodeA, "ua-data", "xfs", 300 * MIB);
    Volume log = mounted(nodeB, "ub-log", "ext4", 32 * MIB);
    String endpointB = endpoints.get(B);
    // A port nothing listens on: the node's driver is down.
    endpoints.put(B, "127.0.0.1:1");
    try {
      assertThatThrownBy(() -> coordinator.take("group-3", byNode(data, log)))
          .isInstanceOfSatisfying(
              StorageException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE))
          .hasMessageContaining("node " + B);
      assertNoSnapshotOnEitherNode();
      write(target("ua-data").resolve("table"), "still writable");
    } finally {
      endpoints.put(B, endpointB);
      teardown(nodeA, data, target("ua-data"));
      teardown(nodeB, log, target("ub-log"));
    }
  }

  @Test
  void aNodeFrozenWithNoCopyThawsByItselfAtTheDeadlineAndWhenTheStreamIsCut() throws Exception {
    Volume data = mounted(nodeA, "da-data", "xfs", 300 * MIB);
    String id = new SpanningGroupId(dev.soko.driver.state.Ids.newGroupId(), List.of(A, B)).id();
    try {
      // The controller freezes node A and goes silent: A thaws by itself and drops its part.
      GroupCoordinator.Part silent = links.open(A, "group-4", id, List.of(data.id()));
      silent.freeze();
      assertThat(silent.frozen().get(5, TimeUnit.SECONDS)).isEqualTo(id);
      long frozenAt = System.nanoTime();
      CompletableFuture<Void> blocked =
          CompletableFuture.runAsync(
              () -> {
                try {
                  write(
                      target("da-data").resolve("during"),
                      "written once thawed",
                      GroupPartService.DEADLINE.plusSeconds(10));
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      Thread.sleep(1000);
      assertThat(blocked).as("the filesystem is really frozen: a synced write waits").isNotDone();
      assertThatThrownBy(
              () -> silent.done().get(GroupPartService.DEADLINE.toSeconds() + 5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasMessageContaining("ABORTED")
          .hasMessageContaining("not every node froze its members in time");
      assertThat(Duration.ofNanos(System.nanoTime() - frozenAt))
          .isLessThan(GroupPartService.DEADLINE.plusSeconds(2));
      blocked.get(5, TimeUnit.SECONDS);
      assertNoSnapshotOnEitherNode();

      // The controller freezes node A and its stream is cut: A thaws at once.
      GroupCoordinator.Part cut = links.open(A, "group-5", id, List.of(data.id()));
      cut.freeze();
      cut.frozen().get(5, TimeUnit.SECONDS);
      long cutAt = System.nanoTime();
      cut.cancel();
      write(target("da-data").resolve("table"), "thawed again");
      assertThat(Duration.ofNanos(System.nanoTime() - cutAt)).isLessThan(Duration.ofSeconds(3));
      assertNoSnapshotOnEitherNode();
    } finally {
      teardown(nodeA, data, target("da-data"));
    }
  }

  @Test
  void aNodeCertificateMayNotTakeAGroup() throws Exception {
    DataTls node =
        DataTls.load(TestCertificates.directory(host.base.resolve("g-tls-n"), ca, Roles.NODE));
    try (GroupPartLinks asNode = new GroupPartLinks(endpoints::get, node)) {
      GroupCoordinator.Part part =
          asNode.open(A, "group-6", "group-aaaaaaaaaaaaaaaaaaaa@node-b+node-it", List.of());
      part.freeze();
      assertThatThrownBy(() -> part.frozen().get(5, TimeUnit.SECONDS))
          .hasMessageContaining("PERMISSION_DENIED");
    } finally {
      node.close();
    }
  }
}

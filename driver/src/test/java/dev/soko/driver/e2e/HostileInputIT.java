package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Thousands of random, mostly hostile requests to every advertised RPC of the real jar, over its
 * socket, with real loop devices and mounts: traversal and absolute paths, symlinks out of the
 * allowed root, oversized and control-character strings, unknown pools, file systems and mount
 * flags, absurd sizes, real IDs in the wrong places. Every answer must carry a code the spec allows
 * for bad input (never UNKNOWN or INTERNAL), the driver must stay up and ready, nothing outside the
 * pool and the allowed root may change or be mounted, and no secret may reach the log.
 */
class HostileInputIT {
  private static final long MIB = 1024 * 1024;
  private static final int CALLS = 3000;
  private static final String SECRET = "s3cr3t-canary-value";
  private static final Set<Status.Code> ALLOWED =
      EnumSet.of(
          Status.Code.OK,
          Status.Code.INVALID_ARGUMENT,
          Status.Code.NOT_FOUND,
          Status.Code.ALREADY_EXISTS,
          Status.Code.OUT_OF_RANGE,
          Status.Code.RESOURCE_EXHAUSTED,
          Status.Code.FAILED_PRECONDITION,
          Status.Code.ABORTED);

  private enum Rpc {
    CREATE_VOLUME,
    DELETE_VOLUME,
    VALIDATE,
    LIST_VOLUMES,
    GET_CAPACITY,
    CONTROLLER_GET_VOLUME,
    CONTROLLER_EXPAND,
    CREATE_SNAPSHOT,
    DELETE_SNAPSHOT,
    LIST_SNAPSHOTS,
    NODE_STAGE,
    NODE_UNSTAGE,
    NODE_PUBLISH,
    NODE_UNPUBLISH,
    NODE_STATS,
    NODE_EXPAND
  }

  /** Fixed, so a failure reproduces; {@code -Dhostile.seed=N} explores other sequences. */
  private final Random random = new Random(Long.getLong("hostile.seed", 4242));

  private Path root;
  private Path canary;
  private DriverJar driver;
  private CsiClient csi;
  private HostileValues values;
  private final Map<String, String> staged = new java.util.TreeMap<>(); // volume -> staging path

  @BeforeEach
  void start() throws Exception {
    root = Files.createTempDirectory("soko-hostile-");
    canary = Files.createDirectories(root.resolve("canary"));
    Files.writeString(canary.resolve("secret"), "must not change");
    driver = new DriverJar(root);
    csi = driver.start();

    Path mounts = driver.mounts;
    Files.createSymbolicLink(mounts.resolve("link-out"), canary);
    Files.createSymbolicLink(mounts.resolve("link-file"), canary.resolve("secret"));
    Files.writeString(mounts.resolve("a-file"), "not a directory");
    Files.createDirectories(mounts.resolve("staging"));
    List<String> hostile =
        List.of(
            "",
            "/",
            "/etc",
            "/proc/self",
            "relative/path",
            canary.toString(),
            canary.resolve("secret").toString(),
            mounts + "/../canary",
            mounts + "/a/../../canary",
            mounts + "/link-out",
            mounts + "/link-out/inside",
            mounts + "/link-file",
            mounts + "/a-file",
            mounts + "/a-file/below",
            mounts + "/" + "p".repeat(4000),
            mounts + "/with\nnewline",
            mounts.toString(),
            root.resolve("pool").toString(),
            root.resolve("pool/images").toString());
    List<String> wellFormed = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      wellFormed.add(mounts + "/staging/s" + i);
      wellFormed.add(mounts + "/pods/p" + i + "/mount");
    }

    values = new HostileValues(random, hostile, wellFormed);

    String seed =
        csi.controller()
            .createVolume(Requests.createVolume("seed-fs", 16 * MIB, Requests.mount("ext4")))
            .getVolume()
            .getVolumeId();
    values.madeSeedVolume(seed);
    values.madeSeedVolume(
        csi.controller()
            .createVolume(Requests.createVolume("seed-block", 16 * MIB, Requests.block()))
            .getVolume()
            .getVolumeId());
    values.madeSeedSnapshot(
        csi.controller()
            .createSnapshot(Requests.createSnapshot("seed-snap", seed))
            .getSnapshot()
            .getSnapshotId());
  }

  @AfterEach
  void stop() throws Exception {
    driver.close();
    HostState.release(root);
  }

  @Test
  void randomHostileRequestsGetSpecCodesAndTouchNothingOutside() throws Exception {
    Set<String> outsideBefore = filesOutsidePoolAndMounts();
    Set<String> mountsBefore = mountsOutside(driver.mounts);
    Map<Rpc, Map<Status.Code, Integer>> seen = new EnumMap<>(Rpc.class);

    for (int i = 0; i < CALLS; i++) {
      Rpc rpc = Rpc.values()[random.nextInt(Rpc.values().length)];
      Status status = call(rpc, i);
      Status.Code code = status.getCode();
      assertThat(code)
          .as("%s answered %s (call %d): %s", rpc, code, i, status.getDescription())
          .isIn(ALLOWED);
      seen.computeIfAbsent(rpc, r -> new EnumMap<>(Status.Code.class)).merge(code, 1, Integer::sum);
    }

    System.out.println("HostileInputIT answers per RPC: " + seen);
    assertThat(csi.identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue())
        .as("the driver is still up and ready")
        .isTrue();
    assertThat(filesOutsidePoolAndMounts())
        .as("nothing outside the pool and the allowed root changed")
        .isEqualTo(outsideBefore);
    assertThat(Files.readString(canary.resolve("secret"))).isEqualTo("must not change");
    assertThat(mountsOutside(driver.mounts))
        .as("no mount outside the allowed root")
        .isEqualTo(mountsBefore);
    String log = Files.readString(root.resolve("driver.log"));
    assertThat(log).as("secrets and volume context stay out of the log").doesNotContain(SECRET);
    assertThat(log).as("no stack trace in the log").doesNotContain("\tat ");
    assertThat(seen.keySet()).as("every RPC was called").hasSize(Rpc.values().length);
    assertThat(
            seen.values().stream().mapToInt(codes -> codes.getOrDefault(Status.Code.OK, 0)).sum())
        .as("some calls were valid and succeeded")
        .isGreaterThan(50);
  }

  /** One random request; returns its status. */
  private Status call(Rpc rpc, int i) {
    try {
      switch (rpc) {
        case CREATE_VOLUME -> {
          Csi.CreateVolumeRequest.Builder request =
              Csi.CreateVolumeRequest.newBuilder()
                  .setName(values.pick(() -> "fuzz-" + i, values::hostileString))
                  .setCapacityRange(values.range())
                  .putAllParameters(values.parameters())
                  .putSecrets("password", SECRET);
          values.addCapabilities(request::addVolumeCapabilities);
          if (random.nextInt(4) == 0) {
            request.setVolumeContentSource(values.contentSource());
          }
          Csi.Volume volume = csi.controller().createVolume(request.build()).getVolume();
          values.madeVolume(volume.getVolumeId());
        }
        case DELETE_VOLUME ->
            csi.controller()
                .deleteVolume(
                    Csi.DeleteVolumeRequest.newBuilder()
                        .setVolumeId(values.volumeToDelete())
                        .putSecrets("password", SECRET)
                        .build());
        case VALIDATE -> {
          Csi.ValidateVolumeCapabilitiesRequest.Builder request =
              Csi.ValidateVolumeCapabilitiesRequest.newBuilder()
                  .setVolumeId(values.volumeId())
                  .putAllParameters(values.parameters())
                  .putVolumeContext("note", SECRET);
          values.addCapabilities(request::addVolumeCapabilities);
          csi.controller().validateVolumeCapabilities(request.build());
        }
        case LIST_VOLUMES ->
            csi.controller()
                .listVolumes(
                    Csi.ListVolumesRequest.newBuilder()
                        .setMaxEntries(random.nextInt(5) - 1)
                        .setStartingToken(values.pick(() -> "", values::hostileString))
                        .build());
        case GET_CAPACITY -> {
          Csi.GetCapacityRequest.Builder request =
              Csi.GetCapacityRequest.newBuilder().putAllParameters(values.parameters());
          if (random.nextBoolean()) {
            request.setAccessibleTopology(
                Csi.Topology.newBuilder()
                    .putSegments(
                        values.pick(() -> "topology.soko.dev/node", values::hostileString),
                        values.pick(() -> "it-node", values::hostileString)));
          }
          values.addCapabilities(request::addVolumeCapabilities);
          csi.controller().getCapacity(request.build());
        }
        case CONTROLLER_GET_VOLUME ->
            csi.controller()
                .controllerGetVolume(
                    Csi.ControllerGetVolumeRequest.newBuilder()
                        .setVolumeId(values.volumeId())
                        .build());
        case CONTROLLER_EXPAND ->
            csi.controller()
                .controllerExpandVolume(
                    Csi.ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(values.volumeId())
                        .setCapacityRange(values.range())
                        .putSecrets("password", SECRET)
                        .build());
        case CREATE_SNAPSHOT -> {
          Csi.Snapshot snapshot =
              csi.controller()
                  .createSnapshot(
                      Csi.CreateSnapshotRequest.newBuilder()
                          .setName(values.pick(() -> "fuzz-snap-" + i, values::hostileString))
                          .setSourceVolumeId(values.volumeId())
                          .putAllParameters(values.parameters())
                          .putSecrets("password", SECRET)
                          .build())
                  .getSnapshot();
          values.madeSnapshot(snapshot.getSnapshotId());
        }
        case DELETE_SNAPSHOT ->
            csi.controller()
                .deleteSnapshot(
                    Csi.DeleteSnapshotRequest.newBuilder()
                        .setSnapshotId(values.snapshotToDelete())
                        .build());
        case LIST_SNAPSHOTS ->
            csi.controller()
                .listSnapshots(
                    Csi.ListSnapshotsRequest.newBuilder()
                        .setMaxEntries(random.nextInt(5) - 1)
                        .setStartingToken(values.pick(() -> "", values::hostileString))
                        .setSourceVolumeId(values.pick(() -> "", () -> values.volumeId()))
                        .setSnapshotId(values.pick(() -> "", () -> values.snapshotId()))
                        .build());
        case NODE_STAGE -> {
          Csi.NodeStageVolumeRequest.Builder request =
              Csi.NodeStageVolumeRequest.newBuilder()
                  .setVolumeId(values.volumeId())
                  .setStagingTargetPath(values.path())
                  .putSecrets("password", SECRET)
                  .putVolumeContext("note", SECRET);
          values.addCapabilities(c -> request.setVolumeCapability(c));
          csi.node().nodeStageVolume(request.build());
          staged.put(request.getVolumeId(), request.getStagingTargetPath());
        }
        case NODE_UNSTAGE ->
            csi.node()
                .nodeUnstageVolume(
                    Csi.NodeUnstageVolumeRequest.newBuilder()
                        .setVolumeId(values.volumeId())
                        .setStagingTargetPath(values.path())
                        .build());
        case NODE_PUBLISH -> {
          // Mostly a volume where it really is staged, so that publishing gets past that check.
          List<String> stagedIds = new ArrayList<>(staged.keySet());
          String volumeId =
              stagedIds.isEmpty() || random.nextInt(4) == 0
                  ? values.volumeId()
                  : stagedIds.get(random.nextInt(stagedIds.size()));
          Csi.NodePublishVolumeRequest.Builder request =
              Csi.NodePublishVolumeRequest.newBuilder()
                  .setVolumeId(volumeId)
                  .setStagingTargetPath(
                      values.pick(() -> staged.getOrDefault(volumeId, values.path()), values::path))
                  .setTargetPath(values.path())
                  .setReadonly(random.nextBoolean())
                  .putSecrets("password", SECRET)
                  .putVolumeContext("note", SECRET);
          values.addCapabilities(c -> request.setVolumeCapability(c));
          csi.node().nodePublishVolume(request.build());
        }
        case NODE_UNPUBLISH ->
            csi.node()
                .nodeUnpublishVolume(
                    Csi.NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(values.volumeId())
                        .setTargetPath(values.path())
                        .build());
        case NODE_STATS ->
            csi.node()
                .nodeGetVolumeStats(
                    Csi.NodeGetVolumeStatsRequest.newBuilder()
                        .setVolumeId(values.volumeId())
                        .setVolumePath(values.path())
                        .setStagingTargetPath(values.pick(() -> "", values::path))
                        .build());
        case NODE_EXPAND -> {
          Csi.NodeExpandVolumeRequest.Builder request =
              Csi.NodeExpandVolumeRequest.newBuilder()
                  .setVolumeId(values.volumeId())
                  .setVolumePath(values.path())
                  .setStagingTargetPath(values.pick(() -> "", values::path))
                  .setCapacityRange(values.range());
          if (random.nextBoolean()) {
            values.addCapabilities(c -> request.setVolumeCapability(c));
          }
          csi.node().nodeExpandVolume(request.build());
        }
      }
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    }
  }

  /** Every path under the test's root outside the pool and the allowed root, with its size. */
  private Set<String> filesOutsidePoolAndMounts() throws IOException {
    Path pool = root.resolve("pool");
    try (Stream<Path> all = Files.walk(root)) {
      Set<String> files = new TreeSet<>();
      all.filter(p -> !p.startsWith(pool) && !p.startsWith(driver.mounts))
          .filter(p -> !p.equals(root.resolve("driver.log")))
          .forEach(p -> files.add(p + " " + (Files.isRegularFile(p) ? size(p) : "dir")));
      return files;
    }
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      return -1;
    }
  }

  /** Mount points of the host outside {@code allowed}. */
  private static Set<String> mountsOutside(Path allowed) throws IOException {
    Set<String> mounts = new TreeSet<>();
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String mountPoint = line.split(" ")[4];
      if (!mountPoint.startsWith(allowed + "/")) {
        mounts.add(mountPoint);
      }
    }
    return mounts;
  }
}

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
import java.util.function.Supplier;
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
  private final List<String> volumeIds = new ArrayList<>();
  private final List<String> snapshotIds = new ArrayList<>();
  private final Map<String, String> staged = new java.util.TreeMap<>(); // volume -> staging path
  private final List<String> hostile = new ArrayList<>();
  private final List<String> wellFormed = new ArrayList<>();

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
    hostile.addAll(
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
            root.resolve("pool/images").toString()));
    for (int i = 0; i < 6; i++) {
      wellFormed.add(mounts + "/staging/s" + i);
      wellFormed.add(mounts + "/pods/p" + i + "/mount");
    }

    volumeIds.add(
        csi.controller()
            .createVolume(Requests.createVolume("seed-fs", 16 * MIB, Requests.mount("ext4")))
            .getVolume()
            .getVolumeId());
    volumeIds.add(
        csi.controller()
            .createVolume(Requests.createVolume("seed-block", 16 * MIB, block()))
            .getVolume()
            .getVolumeId());
    snapshotIds.add(
        csi.controller()
            .createSnapshot(Requests.createSnapshot("seed-snap", volumeIds.get(0)))
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
                  .setName(pick(() -> "fuzz-" + i, this::hostileString))
                  .setCapacityRange(range())
                  .putAllParameters(parameters())
                  .putSecrets("password", SECRET);
          addCapabilities(request::addVolumeCapabilities);
          if (random.nextInt(4) == 0) {
            request.setVolumeContentSource(contentSource());
          }
          Csi.Volume volume = csi.controller().createVolume(request.build()).getVolume();
          volumeIds.add(volume.getVolumeId());
        }
        case DELETE_VOLUME ->
            csi.controller()
                .deleteVolume(
                    Csi.DeleteVolumeRequest.newBuilder()
                        .setVolumeId(deletable(volumeIds, 2))
                        .putSecrets("password", SECRET)
                        .build());
        case VALIDATE -> {
          Csi.ValidateVolumeCapabilitiesRequest.Builder request =
              Csi.ValidateVolumeCapabilitiesRequest.newBuilder()
                  .setVolumeId(id(volumeIds))
                  .putAllParameters(parameters())
                  .putVolumeContext("note", SECRET);
          addCapabilities(request::addVolumeCapabilities);
          csi.controller().validateVolumeCapabilities(request.build());
        }
        case LIST_VOLUMES ->
            csi.controller()
                .listVolumes(
                    Csi.ListVolumesRequest.newBuilder()
                        .setMaxEntries(random.nextInt(5) - 1)
                        .setStartingToken(pick(() -> "", this::hostileString))
                        .build());
        case GET_CAPACITY -> {
          Csi.GetCapacityRequest.Builder request =
              Csi.GetCapacityRequest.newBuilder().putAllParameters(parameters());
          if (random.nextBoolean()) {
            request.setAccessibleTopology(
                Csi.Topology.newBuilder()
                    .putSegments(
                        pick(() -> "topology.soko.dev/node", this::hostileString),
                        pick(() -> "it-node", this::hostileString)));
          }
          addCapabilities(request::addVolumeCapabilities);
          csi.controller().getCapacity(request.build());
        }
        case CONTROLLER_GET_VOLUME ->
            csi.controller()
                .controllerGetVolume(
                    Csi.ControllerGetVolumeRequest.newBuilder().setVolumeId(id(volumeIds)).build());
        case CONTROLLER_EXPAND ->
            csi.controller()
                .controllerExpandVolume(
                    Csi.ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(id(volumeIds))
                        .setCapacityRange(range())
                        .putSecrets("password", SECRET)
                        .build());
        case CREATE_SNAPSHOT -> {
          Csi.Snapshot snapshot =
              csi.controller()
                  .createSnapshot(
                      Csi.CreateSnapshotRequest.newBuilder()
                          .setName(pick(() -> "fuzz-snap-" + i, this::hostileString))
                          .setSourceVolumeId(id(volumeIds))
                          .putAllParameters(parameters())
                          .putSecrets("password", SECRET)
                          .build())
                  .getSnapshot();
          snapshotIds.add(snapshot.getSnapshotId());
        }
        case DELETE_SNAPSHOT ->
            csi.controller()
                .deleteSnapshot(
                    Csi.DeleteSnapshotRequest.newBuilder()
                        .setSnapshotId(deletable(snapshotIds, 1))
                        .build());
        case LIST_SNAPSHOTS ->
            csi.controller()
                .listSnapshots(
                    Csi.ListSnapshotsRequest.newBuilder()
                        .setMaxEntries(random.nextInt(5) - 1)
                        .setStartingToken(pick(() -> "", this::hostileString))
                        .setSourceVolumeId(pick(() -> "", () -> id(volumeIds)))
                        .setSnapshotId(pick(() -> "", () -> id(snapshotIds)))
                        .build());
        case NODE_STAGE -> {
          Csi.NodeStageVolumeRequest.Builder request =
              Csi.NodeStageVolumeRequest.newBuilder()
                  .setVolumeId(id(volumeIds))
                  .setStagingTargetPath(path())
                  .putSecrets("password", SECRET)
                  .putVolumeContext("note", SECRET);
          addCapabilities(c -> request.setVolumeCapability(c));
          csi.node().nodeStageVolume(request.build());
          staged.put(request.getVolumeId(), request.getStagingTargetPath());
        }
        case NODE_UNSTAGE ->
            csi.node()
                .nodeUnstageVolume(
                    Csi.NodeUnstageVolumeRequest.newBuilder()
                        .setVolumeId(id(volumeIds))
                        .setStagingTargetPath(path())
                        .build());
        case NODE_PUBLISH -> {
          // Mostly a volume where it really is staged, so that publishing gets past that check.
          List<String> stagedIds = new ArrayList<>(staged.keySet());
          String volumeId =
              stagedIds.isEmpty() || random.nextInt(4) == 0
                  ? id(volumeIds)
                  : stagedIds.get(random.nextInt(stagedIds.size()));
          Csi.NodePublishVolumeRequest.Builder request =
              Csi.NodePublishVolumeRequest.newBuilder()
                  .setVolumeId(volumeId)
                  .setStagingTargetPath(
                      pick(() -> staged.getOrDefault(volumeId, path()), this::path))
                  .setTargetPath(path())
                  .setReadonly(random.nextBoolean())
                  .putSecrets("password", SECRET)
                  .putVolumeContext("note", SECRET);
          addCapabilities(c -> request.setVolumeCapability(c));
          csi.node().nodePublishVolume(request.build());
        }
        case NODE_UNPUBLISH ->
            csi.node()
                .nodeUnpublishVolume(
                    Csi.NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(id(volumeIds))
                        .setTargetPath(path())
                        .build());
        case NODE_STATS ->
            csi.node()
                .nodeGetVolumeStats(
                    Csi.NodeGetVolumeStatsRequest.newBuilder()
                        .setVolumeId(id(volumeIds))
                        .setVolumePath(path())
                        .setStagingTargetPath(pick(() -> "", this::path))
                        .build());
        case NODE_EXPAND -> {
          Csi.NodeExpandVolumeRequest.Builder request =
              Csi.NodeExpandVolumeRequest.newBuilder()
                  .setVolumeId(id(volumeIds))
                  .setVolumePath(path())
                  .setStagingTargetPath(pick(() -> "", this::path))
                  .setCapacityRange(range());
          if (random.nextBoolean()) {
            addCapabilities(c -> request.setVolumeCapability(c));
          }
          csi.node().nodeExpandVolume(request.build());
        }
      }
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    }
  }

  /** Mostly a real ID, else a hostile string or a real ID dressed as a path. */
  private String id(List<String> real) {
    String some = real.isEmpty() ? "vol-none" : real.get(random.nextInt(real.size()));
    return switch (random.nextInt(8)) {
      case 0 -> hostileString();
      case 1 -> "../" + some;
      case 2 -> some + "/../../canary";
      default -> some;
    };
  }

  /** An ID to delete: never one of the seeds, so that later calls still find real volumes. */
  private String deletable(List<String> real, int seeds) {
    if (real.size() <= seeds || random.nextInt(4) == 0) {
      return id(List.of());
    }
    return real.remove(seeds + random.nextInt(real.size() - seeds));
  }

  /** Mostly a well-formed path below the allowed root, else a hostile one. */
  private String path() {
    if (random.nextInt(4) == 0) {
      return hostile.get(random.nextInt(hostile.size()));
    }
    return wellFormed.get(random.nextInt(wellFormed.size()));
  }

  private String hostileString() {
    return switch (random.nextInt(12)) {
      case 0 -> "";
      case 1 -> "..";
      case 2 -> "../../etc/passwd";
      case 3 -> "/etc/passwd";
      case 4 -> "x".repeat(1 + random.nextInt(20_000));
      case 5 -> "a\u0000b";
      case 6 -> "line\nbreak";
      case 7 -> "ünïcødé-名前";
      case 8 -> "vol-" + "a".repeat(20);
      case 9 -> "snap-" + "0".repeat(20);
      case 10 -> " spaced ";
      default -> "%2e%2e%2fetc";
    };
  }

  private Csi.CapacityRange range() {
    if (random.nextInt(4) > 0) {
      return Csi.CapacityRange.newBuilder()
          .setRequiredBytes((16 + random.nextInt(16)) * MIB)
          .build();
    }
    long[] sizes = {0, 1, -1, MIB, 16 * MIB, 64 * MIB, 1L << 40, Long.MAX_VALUE};
    return Csi.CapacityRange.newBuilder()
        .setRequiredBytes(sizes[random.nextInt(sizes.length)])
        .setLimitBytes(sizes[random.nextInt(sizes.length)])
        .build();
  }

  private Map<String, String> parameters() {
    Map<String, String> parameters = new java.util.HashMap<>();
    if (random.nextInt(4) > 0) {
      return random.nextBoolean() ? parameters : Map.of("pool", "default");
    }
    if (random.nextBoolean()) {
      parameters.put("pool", pick(() -> "default", this::hostileString));
    }
    if (random.nextBoolean()) {
      parameters.put("fsType", fsType());
    }
    if (random.nextInt(4) == 0) {
      parameters.put(hostileString(), hostileString());
    }
    return parameters;
  }

  private String fsType() {
    String[] types = {"", "ext4", "xfs", "btrfs", "vfat", "../ext4", "ext4;rm -rf /", "EXT4"};
    return types[random.nextInt(types.length)];
  }

  private void addCapabilities(java.util.function.Consumer<Csi.VolumeCapability> add) {
    if (random.nextInt(4) > 0) {
      add.accept(random.nextBoolean() ? Requests.mount("ext4") : block());
      return;
    }
    int count = random.nextInt(3);
    for (int i = 0; i < count; i++) {
      Csi.VolumeCapability.Builder capability = Csi.VolumeCapability.newBuilder();
      switch (random.nextInt(4)) {
        case 0 -> capability.setBlock(Csi.VolumeCapability.BlockVolume.getDefaultInstance());
        case 1 -> {
          // neither block nor mount
        }
        default -> {
          Csi.VolumeCapability.MountVolume.Builder mount =
              Csi.VolumeCapability.MountVolume.newBuilder().setFsType(fsType());
          String[][] flags = {
            {},
            {"ro"},
            {"nosuid"},
            {"exec", "suid"},
            {"remount"},
            {"bind"},
            {"x=y"},
            {"../"},
            {"rw,exec"},
            {"context=foo"}
          };
          for (String flag : flags[random.nextInt(flags.length)]) {
            mount.addMountFlags(flag);
          }
          capability.setMount(mount);
        }
      }
      if (random.nextInt(5) > 0) { // else no access mode at all
        // 0 is UNKNOWN, 6 and 7 are not defined by the spec
        capability.setAccessMode(
            Csi.VolumeCapability.AccessMode.newBuilder().setModeValue(random.nextInt(8)));
      }
      add.accept(capability.build());
    }
  }

  private Csi.VolumeContentSource contentSource() {
    Csi.VolumeContentSource.Builder source = Csi.VolumeContentSource.newBuilder();
    if (random.nextBoolean()) {
      source.setSnapshot(
          Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(id(snapshotIds)));
    } else {
      source.setVolume(
          Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId(id(volumeIds)));
    }
    return source.build();
  }

  private String pick(Supplier<String> usual, Supplier<String> hostile) {
    return random.nextInt(3) == 0 ? hostile.get() : usual.get();
  }

  private static Csi.VolumeCapability block() {
    return Csi.VolumeCapability.newBuilder()
        .setBlock(Csi.VolumeCapability.BlockVolume.getDefaultInstance())
        .setAccessMode(
            Csi.VolumeCapability.AccessMode.newBuilder()
                .setMode(Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
        .build();
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

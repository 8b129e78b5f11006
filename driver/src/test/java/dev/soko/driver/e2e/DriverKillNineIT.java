package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Runs a random stream of create / snapshot / group snapshot / expand / delete calls against the
 * real driver jar and kills it with SIGKILL at random moments. After every restart the client
 * retries the call that was in flight (as the external-provisioner would), and then the driver's
 * volumes, snapshots and group snapshots must be exactly the ones the client was told about. At the
 * end everything is deleted and nothing may be left: no image, no record, no loop device, no mount.
 */
class DriverKillNineIT {
  private static final long MIB = 1024 * 1024;
  private static final int ROUNDS = 12;

  /** How long the workload may take to notice the driver died under its call. */
  private static final Duration WORKER_END = Duration.ofSeconds(60);

  private static final Csi.VolumeCapability EXT4 = Requests.mount("ext4");

  private final Random random = new Random(Long.getLong("crash.seed", 20261129L));
  private final Map<String, Long> volumes = new HashMap<>(); // volume ID -> acknowledged bytes
  private final Map<String, String> volumeIdsByName = new HashMap<>();
  private final Map<String, String> snapshots = new HashMap<>(); // snapshot ID -> source volume
  private final Map<String, List<String>> groups = new HashMap<>(); // group ID -> member IDs
  private int names;
  private int acknowledged;
  private int retriedAfterCrash;
  private Path root;
  private DriverJar driver;

  /** A call the client made; run again after a crash until the driver answers. */
  private interface Call {
    void run(CsiClient csi);
  }

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createTempDirectory("soko-crash-");
    driver = new DriverJar(root);
  }

  @AfterEach
  void tearDown() throws Exception {
    driver.close();
    HostState.release(root);
  }

  @Test
  void volumesSurviveKillNineAtRandomPointsWithoutLeaks() throws Exception {
    for (int round = 0; round < ROUNDS; round++) {
      CsiClient csi = driver.start();
      assertMatchesModel(csi, "after restart " + round);
      AtomicReference<Call> inFlight = new AtomicReference<>();
      Thread worker = new Thread(() -> runRandomCalls(csi, inFlight), "crash-worker");
      worker.start();
      Thread.sleep(150 + random.nextInt(900));
      driver.kill();
      worker.join(WORKER_END.toMillis());
      assertThat(worker.isAlive())
          .as("the workload's call in flight ended within %s of the kill", WORKER_END)
          .isFalse();
      Call interrupted = inFlight.get();
      if (interrupted != null) {
        try {
          interrupted.run(driver.start()); // the CO's retry of the call the crash cut short
        } catch (StatusRuntimeException e) {
          if (!poolFull(e)) {
            throw e;
          }
        }
        retriedAfterCrash++;
        driver.stop();
      }
    }
    CsiClient csi = driver.start();
    assertMatchesModel(csi, "after the last restart");
    for (String id : new ArrayList<>(groups.keySet())) {
      csi.groupController().deleteVolumeGroupSnapshot(deleteGroup(id));
    }
    for (String id : new ArrayList<>(snapshots.keySet())) {
      csi.controller().deleteSnapshot(Requests.deleteSnapshot(id));
    }
    for (String id : new ArrayList<>(volumes.keySet())) {
      csi.controller().deleteVolume(Requests.deleteVolume(id));
    }
    driver.stop();

    System.out.printf(
        "crash test: %d rounds, %d calls answered, %d cut short by kill -9 and retried%n",
        ROUNDS, acknowledged, retriedAfterCrash);
    // The test proves something only if the kills really landed among calls.
    assertThat(acknowledged).as("calls answered").isGreaterThan(ROUNDS * 3);
    assertThat(retriedAfterCrash).as("calls cut short by a kill").isGreaterThan(ROUNDS / 2);
    assertThat(HostState.loopDevicesUnder(root)).as("loop devices left").isEmpty();
    assertThat(HostState.mountsUnder(root)).as("mounts left").isEmpty();
    assertThat(filesLeftIn(driver.pool)).as("images or records left in the pool").isEmpty();
  }

  /** Makes calls until the driver dies; the last call's retry is left in {@code inFlight}. */
  private void runRandomCalls(CsiClient csi, AtomicReference<Call> inFlight) {
    while (true) {
      Call call = nextCall();
      inFlight.set(call);
      try {
        call.run(csi);
        inFlight.set(null);
        acknowledged++;
      } catch (StatusRuntimeException e) {
        if (!poolFull(e)) {
          return; // the driver died under the call
        }
        inFlight.set(null); // answered: a refused call changes nothing
      } catch (IllegalStateException deadDriver) {
        return;
      }
    }
  }

  /**
   * The workload's random creates, snapshots and growths can fill the pool (the faster the driver,
   * the sooner); the right answer then leaves the model unchanged: RESOURCE_EXHAUSTED for a create
   * or snapshot, OUT_OF_RANGE naming the missing bytes for a growth (the code external-resizer
   * takes as infeasible).
   */
  private static boolean poolFull(StatusRuntimeException e) {
    Status status = e.getStatus();
    return status.getCode() == Status.Code.RESOURCE_EXHAUSTED
        || (status.getCode() == Status.Code.OUT_OF_RANGE
            && String.valueOf(status.getDescription()).contains("more are needed"));
  }

  private static Csi.DeleteVolumeGroupSnapshotRequest deleteGroup(String id) {
    return Csi.DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).build();
  }

  private Call nextCall() {
    int dice = random.nextInt(12);
    List<String> volumeIds = new ArrayList<>(new TreeSet<>(volumes.keySet()));
    if (volumeIds.isEmpty() || dice < 4) {
      String name = "crash-vol-" + names++;
      long bytes = (16 + random.nextInt(4) * 16) * MIB;
      return csi -> {
        Csi.Volume v =
            csi.controller().createVolume(Requests.createVolume(name, bytes, EXT4)).getVolume();
        synchronized (this) {
          volumes.put(v.getVolumeId(), v.getCapacityBytes());
          volumeIdsByName.put(name, v.getVolumeId());
        }
      };
    }
    String volumeId = volumeIds.get(random.nextInt(volumeIds.size()));
    if (dice == 10 && volumeIds.size() > 1) {
      String name = "crash-group-" + names++;
      String other = volumeIds.get((volumeIds.indexOf(volumeId) + 1) % volumeIds.size());
      return csi -> {
        Csi.VolumeGroupSnapshot g =
            csi.groupController()
                .createVolumeGroupSnapshot(
                    Csi.CreateVolumeGroupSnapshotRequest.newBuilder()
                        .setName(name)
                        .addSourceVolumeIds(volumeId)
                        .addSourceVolumeIds(other)
                        .build())
                .getGroupSnapshot();
        synchronized (this) {
          List<String> members = new ArrayList<>();
          for (Csi.Snapshot member : g.getSnapshotsList()) {
            snapshots.put(member.getSnapshotId(), member.getSourceVolumeId());
            members.add(member.getSnapshotId());
          }
          groups.put(g.getGroupSnapshotId(), members);
        }
      };
    }
    if (dice == 11 && !groups.isEmpty()) {
      String groupId = new TreeSet<>(groups.keySet()).first();
      return csi -> {
        csi.groupController().deleteVolumeGroupSnapshot(deleteGroup(groupId));
        synchronized (this) {
          groups.remove(groupId).forEach(snapshots::remove);
        }
      };
    }
    if (dice < 6) {
      String name = "crash-snap-" + names++;
      return csi -> {
        Csi.Snapshot s =
            csi.controller().createSnapshot(Requests.createSnapshot(name, volumeId)).getSnapshot();
        synchronized (this) {
          snapshots.put(s.getSnapshotId(), volumeId);
        }
      };
    }
    if (dice < 7 && !snapshots.isEmpty()) {
      String snapshotId = new TreeSet<>(snapshots.keySet()).first();
      return csi -> {
        csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshotId));
        synchronized (this) {
          snapshots.remove(snapshotId);
        }
      };
    }
    if (dice < 8) {
      long bytes = volumes.get(volumeId) + 16 * MIB;
      return csi -> {
        long capacity =
            csi.controller()
                .controllerExpandVolume(
                    Csi.ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(volumeId)
                        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(bytes))
                        .setVolumeCapability(EXT4)
                        .build())
                .getCapacityBytes();
        synchronized (this) {
          volumes.put(volumeId, capacity);
        }
      };
    }
    return csi -> {
      csi.controller().deleteVolume(Requests.deleteVolume(volumeId));
      synchronized (this) {
        volumes.remove(volumeId);
      }
    };
  }

  private synchronized void assertMatchesModel(CsiClient csi, String when) throws Exception {
    Map<String, Long> listed = new HashMap<>();
    String token = "";
    do {
      Csi.ListVolumesResponse page =
          csi.controller()
              .listVolumes(
                  Csi.ListVolumesRequest.newBuilder()
                      .setMaxEntries(7)
                      .setStartingToken(token)
                      .build());
      for (Csi.ListVolumesResponse.Entry e : page.getEntriesList()) {
        listed.put(e.getVolume().getVolumeId(), e.getVolume().getCapacityBytes());
      }
      token = page.getNextToken();
    } while (!token.isEmpty());
    assertThat(listed.keySet())
        .as("volumes " + when + "; log:\n" + driver.log())
        .isEqualTo(volumes.keySet());
    for (Map.Entry<String, Long> v : volumes.entrySet()) {
      assertThat(listed.get(v.getKey()))
          .as("capacity of " + v.getKey() + " " + when)
          .isGreaterThanOrEqualTo(v.getValue());
    }
    Set<String> listedSnapshots =
        csi
            .controller()
            .listSnapshots(Csi.ListSnapshotsRequest.getDefaultInstance())
            .getEntriesList()
            .stream()
            .map(e -> e.getSnapshot().getSnapshotId())
            .collect(Collectors.toSet());
    assertThat(listedSnapshots).as("snapshots " + when).isEqualTo(snapshots.keySet());
    for (Map.Entry<String, List<String>> g : groups.entrySet()) {
      Csi.VolumeGroupSnapshot got =
          csi.groupController()
              .getVolumeGroupSnapshot(
                  Csi.GetVolumeGroupSnapshotRequest.newBuilder()
                      .setGroupSnapshotId(g.getKey())
                      .addAllSnapshotIds(g.getValue())
                      .build())
              .getGroupSnapshot();
      assertThat(got.getReadyToUse())
          .as("group snapshot %s %s: ready while every member is there", g.getKey(), when)
          .isEqualTo(snapshots.keySet().containsAll(g.getValue()));
    }
  }

  private static List<Path> filesLeftIn(Path pool) throws Exception {
    try (var paths = Files.walk(pool)) {
      // Each record directory keeps its (preallocated) journal, the pool its format number;
      // nothing else may remain.
      Path format = pool.resolve(".soko/format");
      return paths
          .filter(Files::isRegularFile)
          .filter(p -> !p.getFileName().toString().equals("journal"))
          .filter(p -> !p.equals(format))
          .collect(Collectors.toList());
    }
  }
}

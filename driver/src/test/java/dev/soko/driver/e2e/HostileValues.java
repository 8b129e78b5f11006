package dev.soko.driver.e2e;

import csi.v1.Csi;
import dev.soko.driver.client.Requests;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The values of {@link HostileInputIT}'s requests: mostly well-formed (real IDs, paths below the
 * allowed root, sizes that fit), else hostile. All drawn from the test's one seeded {@link Random},
 * in the order the test asks, so that a seed replays the same sequence of requests.
 */
final class HostileValues {
  private static final long MIB = 1024 * 1024;
  private final Random random;
  private final List<String> hostilePaths;
  private final List<String> wellFormedPaths;
  private final List<String> volumeIds = new ArrayList<>();
  private final List<String> snapshotIds = new ArrayList<>();
  // The first IDs of each list are seeds, made before any random call and never deleted.
  private int volumeSeeds;
  private int snapshotSeeds;

  HostileValues(Random random, List<String> hostilePaths, List<String> wellFormedPaths) {
    this.random = random;
    this.hostilePaths = List.copyOf(hostilePaths);
    this.wellFormedPaths = List.copyOf(wellFormedPaths);
  }

  /** A volume the test made before its random calls; it is never handed out for deletion. */
  void madeSeedVolume(String id) {
    volumeIds.add(volumeSeeds++, id);
  }

  /** A snapshot the test made before its random calls; it is never handed out for deletion. */
  void madeSeedSnapshot(String id) {
    snapshotIds.add(snapshotSeeds++, id);
  }

  void madeVolume(String id) {
    volumeIds.add(id);
  }

  void madeSnapshot(String id) {
    snapshotIds.add(id);
  }

  String volumeId() {
    return id(volumeIds);
  }

  String snapshotId() {
    return id(snapshotIds);
  }

  String volumeToDelete() {
    return deletable(volumeIds, volumeSeeds);
  }

  String snapshotToDelete() {
    return deletable(snapshotIds, snapshotSeeds);
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
  String path() {
    if (random.nextInt(4) == 0) {
      return hostilePaths.get(random.nextInt(hostilePaths.size()));
    }
    return wellFormedPaths.get(random.nextInt(wellFormedPaths.size()));
  }

  String hostileString() {
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

  Csi.CapacityRange range() {
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

  Map<String, String> parameters() {
    Map<String, String> parameters = new HashMap<>();
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

  void addCapabilities(Consumer<Csi.VolumeCapability> add) {
    if (random.nextInt(4) > 0) {
      add.accept(random.nextBoolean() ? Requests.mount("ext4") : Requests.block());
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

  Csi.VolumeContentSource contentSource() {
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

  String pick(Supplier<String> usual, Supplier<String> hostile) {
    return random.nextInt(3) == 0 ? hostile.get() : usual.get();
  }
}

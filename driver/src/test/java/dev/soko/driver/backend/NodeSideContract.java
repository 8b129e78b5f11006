package dev.soko.driver.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.FsStats;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.SystemMounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.Ids;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the node side needs of every backend ({@link NodeSide}), run against each backend on its
 * real storage with real devices and mounts: a staged volume keeps what is written to it, its
 * mounts are found as its own and no other volume's, a grow reaches what the workload sees, its
 * stats show what it holds, and what recovery and health read of attached devices. Staging here is
 * the volume layer's way reduced to its steps (attach, format and mount a device; bind-mount a
 * directory), so that a new backend proves its node side before the engine sees it.
 *
 * <p>Each test that depends on how the volume is handed over runs once per form the backend could
 * be asked for: a filesystem volume of each type it formats (or of the pool's own filesystem), and
 * a raw block volume. What a backend cannot do skips itself with the reason, read from its traits
 * and its kind of node side: it never passes untested.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class NodeSideContract {
  private static final long MIB = 1024 * 1024;
  // mkfs.xfs makes nothing smaller than 300 MiB.
  private static final long CAPACITY = 320 * MIB;
  private static final long GROWN = 384 * MIB;
  private static final long WRITTEN = 4 * MIB;
  private static final Exec EXEC = new ProcessExec();

  private final Mounter mounter = new SystemMounter(EXEC);
  private final List<Path> mountedTargets = new ArrayList<>();
  private final List<String> attachedDevices = new ArrayList<>();
  private VolumeBackend backend;
  private PoolDirectories pools;
  private Pool pool;
  private Path targets;
  private int stagings;

  /** The backend under test. */
  protected abstract BackendUnderTest subject();

  /**
   * How a volume is handed to the workload.
   *
   * @param fsType the filesystem the node side makes on a device; empty for a raw block volume and
   *     for a directory volume, whose filesystem is the pool's own
   */
  protected record Form(AccessType access, String fsType) {
    @Override
    public String toString() {
      if (access == AccessType.BLOCK) {
        return "raw block";
      }
      return fsType.isEmpty() ? "the pool's filesystem" : fsType;
    }
  }

  /** Every form a request can ask for: one per filesystem the backend formats, and raw block. */
  Stream<Form> forms() {
    StorageTraits traits = subject().backend().get().traits();
    Stream<Form> filesystems =
        traits.formatsVolumes()
            ? traits.fsTypes().stream().sorted().map(fs -> new Form(AccessType.FILESYSTEM, fs))
            : Stream.of(new Form(AccessType.FILESYSTEM, ""));
    return Stream.concat(filesystems, Stream.of(new Form(AccessType.BLOCK, "")));
  }

  @BeforeEach
  final void openPool() throws Exception {
    backend = subject().backend().get();
    pools = subject().pools().get();
    pool = PoolDirectories.open(subject().kind(), backend, "pool", pools.directory("pool"));
    targets = Files.createTempDirectory("soko-node-contract-");
  }

  /** Takes down what a test left staged, failed or not, then the pools. */
  @AfterEach
  final void closePool() throws Exception {
    try {
      for (int i = mountedTargets.size() - 1; i >= 0; i--) {
        mounter.unmount(mountedTargets.get(i));
      }
      if (backend.nodeSide() instanceof BlockDevices devices) {
        attachedDevices.forEach(devices::detach);
      }
    } finally {
      // One instance runs every test of the class: the next starts with nothing staged.
      mountedTargets.clear();
      attachedDevices.clear();
      if (pool != null) {
        pool.close();
      }
      pools.close();
      EXEC.check(List.of("rm", "-rf", "--one-file-system", targets.toString()), Exec.SHORT);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forms")
  void whatIsWrittenIsThereWhenStagedAgain(Form form) throws IOException {
    servable(form);
    Path location = newVolume();
    byte[] data = ("written to " + location.getFileName()).getBytes(StandardCharsets.UTF_8);

    Staged first = stage(location, form);
    write(first, form, data);
    unstage(first);
    Staged second = stage(location, form);

    assertThat(read(second, form, data.length)).isEqualTo(data);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forms")
  void itsMountsAreFoundAsItsOwnUntilItIsUnstaged(Form form) throws IOException {
    servable(form);
    Path location = newVolume();
    Path other = newVolume();

    Staged staged = stage(location, form);

    if (backend.nodeSide() instanceof BlockDevices devices) {
      String device = staged.device().orElseThrow();
      assertThat(devices.devices(location)).containsExactly(device);
      assertThat(devices.devices(other)).isEmpty();
      assertThat(devices.backedBy(devices.inventory(), location, false)).containsExactly(device);
      if (form.access() == AccessType.FILESYSTEM) {
        assertThat(mounter.mountAt(staged.target()).map(MountEntry::source)).contains(device);
      }
    } else {
      MountEntry mount = mounter.mountAt(staged.target()).orElseThrow();
      assertThat(directories().identity(pool, location).matches(mount)).isTrue();
      assertThat(directories().identity(pool, other).matches(mount)).isFalse();
      assertThat(directories().mounted(pool, location)).isTrue();
      assertThat(directories().mounted(pool, other)).isFalse();
    }

    unstage(staged);

    if (backend.nodeSide() instanceof BlockDevices devices) {
      assertThat(devices.devices(location)).isEmpty();
      assertThat(devices.backedBy(devices.inventory(), location, false)).isEmpty();
    } else {
      assertThat(directories().mounted(pool, location)).isFalse();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forms")
  void aGrowReachesWhatTheWorkloadSees(Form form) throws IOException {
    servable(form);
    Path location = newVolume();
    Staged staged = stage(location, form);
    long totalBefore = form.access() == AccessType.FILESYSTEM ? stats(staged).totalBytes() : 0;

    backend.grow(pool, location, GROWN);

    if (backend.nodeSide() instanceof BlockDevices devices) {
      String device = staged.device().orElseThrow();
      devices.refreshSize(device);
      assertThat(deviceSize(device)).isEqualTo(GROWN);
      if (form.access() == AccessType.FILESYSTEM) {
        growFilesystem(staged, form);
        assertThat(stats(staged).totalBytes()).isGreaterThan(totalBefore);
      }
    } else {
      assertThat(directories().space(pool, location).limitBytes()).isEqualTo(GROWN);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forms")
  void itsStatsShowWhatItHolds(Form form) throws IOException {
    servable(form);
    Path location = newVolume();
    Staged staged = stage(location, form);
    long usedBefore = used(staged, form);

    write(staged, form, new byte[(int) WRITTEN]);
    EXEC.check(List.of("sync", "-f", staged.target().toString()), Exec.SHORT);

    if (form.access() == AccessType.BLOCK) {
      // A raw block volume's stats are its size: the device's, as large as the capacity.
      assertThat(deviceSize(staged.device().orElseThrow())).isEqualTo(CAPACITY);
    } else if (backend.nodeSide() instanceof BlockDevices) {
      assertThat(stats(staged).totalBytes()).isBetween(CAPACITY / 2, CAPACITY);
    } else {
      assertThat(directories().space(pool, location).limitBytes()).isEqualTo(CAPACITY);
    }
    if (form.access() == AccessType.FILESYSTEM) {
      assertThat(used(staged, form) - usedBefore).isGreaterThanOrEqualTo(WRITTEN);
    }
  }

  /**
   * Health and unstage after a delete under an attached device: the device still holds the storage,
   * and is found by it, so that its mounts can be taken down.
   */
  @Test
  void aDeviceStillHoldingDeletedStorageIsFoundByIt() throws IOException {
    BlockDevices devices = attachable();
    Path location = newVolume();
    String device = attach(location);

    backend.delete(location);

    assertThat(devices.devices(location)).isEmpty();
    assertThat(devices.devicesHolding(location)).containsExactly(device);
    assertThat(devices.backedBy(devices.inventory(), location, true)).containsExactly(device);
    detach(device);
    assertThat(devices.devicesHolding(location)).isEmpty();
  }

  /**
   * Recovery after a restart: the devices attached to a pool's volumes and snapshots are found with
   * their locations, and none of another pool's, and detaching them leaves nothing attached.
   */
  @Test
  void recoveryFindsTheDevicesAttachedInThePoolAndDetachesThem() throws Exception {
    BlockDevices devices = attachable();
    Path volume = newVolume();
    Path snapshot = pool.snapshotLocation(Ids.newSnapshotId());
    backend.snapshot(pool, volume, snapshot);
    String volumeDevice = attach(volume);
    String snapshotDevice = attach(snapshot);
    try (Pool other =
        PoolDirectories.open(subject().kind(), backend, "other", pools.directory("other"))) {
      Path elsewhere = other.volumeLocation(Ids.newVolumeId());
      backend.create(other, elsewhere, CAPACITY);
      attach(elsewhere);

      Map<AttachedDevice, Path> found = devices.attachedIn(pool);

      assertThat(found.values()).containsExactlyInAnyOrder(volume, snapshot);
      assertThat(found.keySet())
          .extracting(AttachedDevice::device)
          .containsExactlyInAnyOrder(volumeDevice, snapshotDevice);
      found.keySet().forEach(attached -> detach(attached.device()));
      assertThat(devices.attachedIn(pool)).isEmpty();
      assertThat(devices.attachedIn(other)).hasSize(1);
    }
  }

  private void servable(Form form) {
    StorageTraits traits = backend.traits();
    assumeTrue(
        form.access() != AccessType.BLOCK || traits.blockVolumes(),
        () -> traits.flagName() + " serves no raw block volumes");
  }

  private BlockDevices attachable() {
    assumeTrue(
        backend.nodeSide() instanceof BlockDevices,
        () ->
            backend.traits().flagName()
                + " volumes are directories, bind-mounted and never attached: no device holds"
                + " their storage for health or recovery to find");
    return (BlockDevices) backend.nodeSide();
  }

  private Path newVolume() {
    Path location = pool.volumeLocation(Ids.newVolumeId());
    backend.create(pool, location, CAPACITY);
    return location;
  }

  /**
   * A staged volume: where the workload sees it (a mount point, or the device of a raw block
   * volume) and the device it is attached as, if any.
   */
  private record Staged(Path location, Path target, Optional<String> device) {}

  private Staged stage(Path location, Form form) throws IOException {
    Path target = Files.createDirectories(targets.resolve("staged-" + ++stagings));
    if (!(backend.nodeSide() instanceof BlockDevices)) {
      mounter.bind(location, target);
      mountedTargets.add(target);
      return new Staged(location, target, Optional.empty());
    }
    String device = attach(location);
    if (form.access() == AccessType.BLOCK) {
      return new Staged(location, Path.of(device), Optional.of(device));
    }
    if (mounter.detectFilesystem(device).isEmpty()) {
      mounter.makeFilesystem(device, form.fsType());
    }
    mount(device, target, form);
    return new Staged(location, target, Optional.of(device));
  }

  private void mount(String device, Path target, Form form) {
    mounter.mount(device, target, form.fsType(), List.of());
    mountedTargets.add(target);
  }

  /**
   * Grows the staged filesystem as the volume layer would: unmounted where the filesystem can
   * (ext4, whose online growth the kernel refuses to a root without CAP_SYS_RESOURCE), else mounted
   * (xfs).
   */
  private void growFilesystem(Staged staged, Form form) {
    String device = staged.device().orElseThrow();
    mounter.unmount(staged.target());
    mountedTargets.remove(staged.target());
    boolean grown = mounter.growUnmounted(device, form.fsType());
    mount(device, staged.target(), form);
    if (!grown) {
      mounter.growFilesystem(device, staged.target(), form.fsType());
    }
  }

  private void unstage(Staged staged) {
    if (mountedTargets.remove(staged.target())) {
      mounter.unmount(staged.target());
    }
    staged.device().ifPresent(this::detach);
  }

  private String attach(Path location) {
    String device = ((BlockDevices) backend.nodeSide()).attach(location, 0);
    attachedDevices.add(device);
    return device;
  }

  private void detach(String device) {
    ((BlockDevices) backend.nodeSide()).detach(device);
    attachedDevices.remove(device);
  }

  /** Writes {@code data} where the workload would: at the device's start, or into a file. */
  private static void write(Staged staged, Form form, byte[] data) throws IOException {
    Path path = form.access() == AccessType.BLOCK ? staged.target() : staged.target().resolve("d");
    try (FileChannel channel =
        FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.CREATE)) {
      channel.write(ByteBuffer.wrap(data), 0);
      channel.force(true);
    }
  }

  private static byte[] read(Staged staged, Form form, int length) throws IOException {
    Path path = form.access() == AccessType.BLOCK ? staged.target() : staged.target().resolve("d");
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
      ByteBuffer buffer = ByteBuffer.allocate(length);
      channel.read(buffer, 0);
      return buffer.array();
    }
  }

  /** What the volume holds as its stats report it: its filesystem's, or the backend's own. */
  private long used(Staged staged, Form form) {
    if (form.access() == AccessType.BLOCK) {
      return 0;
    }
    if (backend.nodeSide() instanceof BlockDevices) {
      return stats(staged).usedBytes();
    }
    return directories().space(pool, staged.location()).usedBytes();
  }

  private DirectoryVolumes directories() {
    return (DirectoryVolumes) backend.nodeSide();
  }

  private FsStats stats(Staged staged) {
    return mounter.stats(staged.target());
  }

  private static long deviceSize(String device) {
    return Long.parseLong(
        EXEC.check(List.of("blockdev", "--getsize64", device), Exec.SHORT).stdout().strip());
  }
}

package dev.soko.driver.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.state.Ids;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every backend's {@link VolumeStorage} and {@link StorageTraits} promise the engine, run
 * against each backend on its real storage: a new backend passes this before anything above it is
 * touched. A subclass names the backend and prepares the directories its pools live in.
 */
public abstract class VolumeStorageContract {
  private static final long MIB = 1024 * 1024;

  private Path poolDir;
  private Pool pool;
  private VolumeBackend backend;
  private PoolDirectories pools;

  /** The backend under test. */
  protected abstract BackendUnderTest subject();

  private PoolConfig.Backend kind() {
    return subject().kind();
  }

  @BeforeEach
  final void openPool() throws Exception {
    backend = subject().backend().get();
    pools = subject().pools().get();
    poolDir = pools.directory("pool");
    pool = PoolDirectories.open(kind(), backend, "pool", poolDir);
  }

  @AfterEach
  final void closePool() throws Exception {
    if (pool != null) {
      pool.close();
    }
    pools.close();
  }

  private Path newVolume(long bytes) {
    Path location = pool.volumeLocation(Ids.newVolumeId());
    backend.create(pool, location, bytes);
    return location;
  }

  @Test
  void aNewVolumeExistsWithItsSizeAndRecoveryFindsIt() {
    String id = Ids.newVolumeId();
    Path location = pool.volumeLocation(id);
    assertThat(backend.exists(location)).isFalse();

    backend.create(pool, location, 16 * MIB);

    assertThat(backend.exists(location)).isTrue();
    assertThat(backend.size(pool, location)).isEqualTo(16 * MIB);
    assertThat(backend.stored(pool)).contains(location);
    assertThat(backend.idOf(location)).contains(id);
  }

  @Test
  void growRaisesTheSizeAndNeverShrinks() {
    Path location = newVolume(16 * MIB);

    backend.grow(pool, location, 24 * MIB);
    assertThat(backend.size(pool, location)).isEqualTo(24 * MIB);

    backend.grow(pool, location, 8 * MIB);
    assertThat(backend.size(pool, location)).isEqualTo(24 * MIB);
  }

  @Test
  void aCopyInThePoolIsAVolumeOfTheSourcesSize() {
    Path source = newVolume(16 * MIB);
    String id = Ids.newVolumeId();
    Path target = pool.volumeLocation(id);

    backend.copy(pool, source, target, true);

    assertThat(backend.exists(target)).isTrue();
    assertThat(backend.size(pool, target)).isEqualTo(16 * MIB);
    assertThat(backend.idOf(target)).contains(id);
    assertThat(backend.exists(source)).isTrue();
  }

  @Test
  void aSnapshotIsStoredBesideTheVolumesAndNamedByItsId() {
    Path source = newVolume(16 * MIB);
    String id = Ids.newSnapshotId();
    Path snapshot = pool.snapshotLocation(id);

    backend.snapshot(pool, source, snapshot);

    assertThat(backend.exists(snapshot)).isTrue();
    assertThat(backend.size(pool, snapshot)).isEqualTo(16 * MIB);
    assertThat(backend.stored(pool)).contains(source, snapshot);
    assertThat(backend.idOf(snapshot)).contains(id);
  }

  @Test
  void aCopyAcrossPoolsIsMadeExactlyWhenTheTraitsSaySo() throws Exception {
    Path source = newVolume(16 * MIB);
    try (Pool other = PoolDirectories.open(kind(), backend, "other", pools.directory("other"))) {
      Path target = other.volumeLocation(Ids.newVolumeId());
      if (backend.traits().copiesAcrossPools()) {
        backend.copy(other, source, target, false);
        assertThat(backend.size(other, target)).isEqualTo(16 * MIB);
      } else {
        assertThatThrownBy(() -> backend.copy(other, source, target, false))
            .isInstanceOf(RuntimeException.class);
        assertThat(backend.exists(target)).isFalse();
      }
    }
  }

  @Test
  void deleteRemovesTheStorageAndARepeatIsANoOp() throws Exception {
    Path location = newVolume(16 * MIB);

    backend.delete(location);
    backend.delete(location);

    assertThat(backend.exists(location)).isFalse();
    assertThat(backend.stored(pool)).doesNotContain(location);
    assertThat(backend.tidy(pool)).isNotNegative();
  }

  @Test
  void aLocationNotMadeForAVolumeHasNoId() {
    Path stray = pool.volumesDir().resolve("lost+found");

    assertThat(backend.idOf(stray)).isEqualTo(Optional.empty());
    assertThat(backend.idOf(pool.volumesDir().resolve(Ids.newVolumeId() + ".old"))).isEmpty();
  }

  @Test
  void aFreshVolumeHasNothingUncommittedToRestore() {
    Path location = newVolume(16 * MIB);

    assertThat(backend.restoreUncommitted(pool, location, 16 * MIB)).isFalse();
    assertThat(backend.size(pool, location)).isEqualTo(16 * MIB);
  }

  /** The directories this contract runs in are ones the backend can use: its check passes them. */
  @Test
  void theBackendsOwnCheckPassesADirectoryItCanUse() throws Exception {
    assertThat(backend.checkPool(poolDir, poolDir.toRealPath())).isEqualTo(PoolVerdict.READY);
  }

  @Test
  void theTraitsDescribeThePoolTheBackendLaysOut() {
    StorageTraits traits = backend.traits();
    String id = Ids.newVolumeId();

    assertThat(traits.flagName()).isEqualTo(kind().flagName());
    assertThat(traits.formatsVolumes() || traits.fsTypes().contains(traits.defaultFsType()))
        .as("a backend that makes no filesystem offers its default one")
        .isTrue();
    assertThat(pool.volumeLocation(id))
        .isEqualTo(
            poolDir.resolve(traits.layout().volumesDir()).resolve(id + traits.layout().suffix()));
    assertThat(backend.nodeSide()).isNotNull();
  }
}

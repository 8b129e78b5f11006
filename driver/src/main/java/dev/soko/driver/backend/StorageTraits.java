package dev.soko.driver.backend;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.pool.VolumeLayout;
import java.util.Set;

/**
 * What a backend can serve, so that the volume layer refuses what it cannot do without knowing
 * which backend it is.
 *
 * @param flagName the backend's name in the {@code --pool} flag, for messages
 * @param fsTypes the filesystems its volumes can have (the configuration's list for the backend)
 * @param defaultFsType the filesystem of a volume whose pool and request name none
 * @param blockVolumes whether it serves raw block volumes
 * @param formatsVolumes whether the node side makes each volume's filesystem (on a device); when
 *     not, a volume's filesystem is the pool's own and only {@code fsTypes} are possible
 * @param copiesAcrossPools whether a volume can be copied into another pool of a backend that can
 *     too (a snapshot of a subvolume cannot leave its filesystem)
 * @param storageNoun what one volume's storage is called in messages ("image file")
 * @param layout how the storage is named in the pool directory
 */
public record StorageTraits(
    String flagName,
    Set<String> fsTypes,
    String defaultFsType,
    boolean blockVolumes,
    boolean formatsVolumes,
    boolean copiesAcrossPools,
    String storageNoun,
    VolumeLayout layout) {

  /**
   * How the backend's volumes travel to another node: a volume on a device the node side formats is
   * an image, one whose filesystem is the pool's own is a directory, sent as its files.
   */
  public CopyForm copyForm() {
    return formatsVolumes ? CopyForm.IMAGE : CopyForm.FILE_TREE;
  }

  /**
   * The traits the table of backends states for {@code backend}, with the ones only the code knows.
   */
  public static StorageTraits of(
      PoolConfig.Backend backend,
      boolean copiesAcrossPools,
      String storageNoun,
      VolumeLayout layout) {
    return new StorageTraits(
        backend.flagName(),
        backend.fsTypes(),
        backend.defaultFsType(),
        backend.blockVolumes(),
        backend.formatsVolumes(),
        copiesAcrossPools,
        storageNoun,
        layout);
  }
}

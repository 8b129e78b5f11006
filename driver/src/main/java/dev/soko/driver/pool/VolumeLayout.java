package dev.soko.driver.pool;

/**
 * How a backend names a volume's storage in its pool: the directory that holds volumes ({@code
 * <pool>/<volumesDir>/<id><suffix>}; snapshots are in {@code snapshots/<id><suffix>}). Part of the
 * on-disk format: a pool laid out by one driver is read by the next.
 *
 * @param volumesDir the volumes' directory below the pool's
 * @param suffix what follows a volume's or snapshot's ID in its file name (may be empty)
 */
public record VolumeLayout(String volumesDir, String suffix) {}

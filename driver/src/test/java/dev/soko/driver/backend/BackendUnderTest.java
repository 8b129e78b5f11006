package dev.soko.driver.backend;

import dev.soko.driver.config.PoolConfig;
import java.util.function.Supplier;

/**
 * One backend as its contract tests ({@link VolumeStorageContract}, {@link NodeSideContract}) run
 * it: which configured backend it is, a fresh instance, and where its pools can be opened.
 */
public record BackendUnderTest(
    PoolConfig.Backend kind, Supplier<VolumeBackend> backend, Supplier<PoolDirectories> pools) {

  /** A backend whose pools need no filesystem of their own: below a temporary directory. */
  public BackendUnderTest(PoolConfig.Backend kind, Supplier<VolumeBackend> backend) {
    this(kind, backend, PoolDirectories::temporary);
  }
}

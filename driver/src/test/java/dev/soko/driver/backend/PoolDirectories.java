package dev.soko.driver.backend;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.pool.Pool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Where a backend's contract opens its pools: empty directories on a filesystem the backend can
 * use. Closing takes down whatever was made for them.
 */
public interface PoolDirectories extends AutoCloseable {

  /** An empty directory that a pool can be opened in; {@code name} tells two apart. */
  Path directory(String name) throws Exception;

  @Override
  void close() throws Exception;

  /**
   * Directories below one temporary directory, for a backend that needs no filesystem of its own.
   */
  static PoolDirectories temporary() {
    return new PoolDirectories() {
      private Path root;

      @Override
      public Path directory(String name) throws Exception {
        if (root == null) {
          root = Files.createTempDirectory("soko-backend-contract-");
        }
        return Files.createDirectories(root.resolve(name));
      }

      @Override
      public void close() throws Exception {
        if (root == null) {
          return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
          paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    };
  }

  /** A pool of {@code backend}, configured as {@code kind}, in {@code directory}. */
  static Pool open(PoolConfig.Backend kind, VolumeBackend backend, String name, Path directory) {
    PoolConfig config =
        new PoolConfig(
            name, directory, 0, 1.0, Set.copyOf(kind.fsTypes()), false, true, Map.of(), kind);
    return Pool.open(config, backend.traits().layout(), new ProcessExec());
  }
}

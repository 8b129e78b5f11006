package dev.soko.driver.csi;

import dev.soko.driver.config.PoolConfig;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which filesystems each configured pool allows, in flag order (the first pool is the default), and
 * which pools serve block volumes. GetCapacity needs it to answer 0 for a pool that cannot make the
 * requested volume.
 */
public final class PoolFsTypes {
  private final Map<String, Set<String>> byPool = new LinkedHashMap<>();
  private final Set<String> withBlock = new HashSet<>();

  public PoolFsTypes(List<PoolConfig> pools) {
    for (PoolConfig pool : pools) {
      byPool.put(pool.name(), Set.copyOf(pool.fsTypes()));
      if (pool.backend().blockVolumes()) {
        withBlock.add(pool.name());
      }
    }
  }

  /** True when the pool exists and serves block volumes. */
  boolean allowsBlock(String pool) {
    return withBlock.contains(pool);
  }

  /** The pool an empty {@code pool} parameter selects, or empty when there are no pools. */
  String defaultPool() {
    return byPool.isEmpty() ? "" : byPool.keySet().iterator().next();
  }

  /** True when the pool exists and allows the type; an empty type means "the pool's default". */
  boolean allows(String pool, String fsType) {
    Set<String> types = byPool.get(pool);
    return types != null && (fsType.isEmpty() || types.contains(fsType));
  }
}

package dev.soko.driver.volume;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.pool.PoolVerdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verdict on every configured pool on this node (ready, refused, not selected), re-evaluated at
 * most once per interval, so that a pool whose disk is mounted later is taken up and a pool that
 * stops passing its checks stops taking new volumes. A change is logged (a refusal at warn, with
 * its reason) and handed to the listeners. Its volumes keep working: only new volumes need a ready
 * pool. A node-label change asks for a check at once ({@link #recheck}).
 */
final class PoolStates {
  private static final Logger LOG = LoggerFactory.getLogger(PoolStates.class);
  static final Duration RECHECK = Duration.ofSeconds(10);

  private final List<PoolConfig> pools;
  private final Function<PoolConfig, PoolVerdict> check;
  private final LongSupplier nanos;
  private final ToIntFunction<String> volumes;
  private final List<Consumer<Map<String, PoolVerdict>>> listeners = new ArrayList<>();
  private final Map<String, PoolVerdict> verdicts = new LinkedHashMap<>();
  private long checkedAt;

  PoolStates(List<PoolConfig> pools, Function<PoolConfig, PoolVerdict> check, LongSupplier nanos) {
    this(pools, check, nanos, pool -> 0);
  }

  /**
   * @param volumes how many volumes a pool holds now, for the log of a pool that stops taking new
   *     ones while it has some
   */
  PoolStates(
      List<PoolConfig> pools,
      Function<PoolConfig, PoolVerdict> check,
      LongSupplier nanos,
      ToIntFunction<String> volumes) {
    this.pools = List.copyOf(pools);
    this.check = check;
    this.nanos = nanos;
    this.volumes = volumes;
    evaluate();
  }

  /** Checks every pool now, whatever the interval: something a verdict depends on changed. */
  synchronized void recheck() {
    evaluate();
  }

  /** Every pool's verdict in configuration order, re-checked when the last check is old enough. */
  synchronized Map<String, PoolVerdict> refresh() {
    if (nanos.getAsLong() - checkedAt >= RECHECK.toNanos()) {
      evaluate();
    }
    return Collections.unmodifiableMap(new LinkedHashMap<>(verdicts));
  }

  synchronized PoolVerdict verdict(String pool) {
    return verdicts.getOrDefault(pool, PoolVerdict.READY);
  }

  /** Adds a listener; it gets the current verdicts at once and every changed set afterwards. */
  synchronized void onChange(Consumer<Map<String, PoolVerdict>> listener) {
    listeners.add(listener);
    listener.accept(Collections.unmodifiableMap(new LinkedHashMap<>(verdicts)));
  }

  /**
   * Throws unless new volumes may go to {@code pool} (empty: the default pool). RESOURCE_EXHAUSTED:
   * the CSI code for "cannot provision in this topology", on which the external-provisioner asks
   * the scheduler for another node.
   */
  void requireReady(String pool) {
    String name = pool == null || pool.isEmpty() ? defaultPool() : pool;
    PoolVerdict verdict = refresh().getOrDefault(name, PoolVerdict.READY);
    if (!verdict.ready()) {
      throw StorageException.exhausted(
          "pool %s takes no volumes on this node: %s",
          name,
          verdict.state() == PoolVerdict.State.REFUSED
              ? "refused, " + verdict.reason()
              : verdict.reason());
    }
  }

  private String defaultPool() {
    return pools.isEmpty() ? "" : pools.get(0).name();
  }

  private void evaluate() {
    checkedAt = nanos.getAsLong();
    Map<String, PoolVerdict> next = new LinkedHashMap<>();
    for (PoolConfig pool : pools) {
      PoolVerdict verdict;
      try {
        verdict = check.apply(pool);
      } catch (RuntimeException e) {
        verdict = PoolVerdict.refused("cannot check pool directory %s: %s", pool.path(), e);
      }
      next.put(pool.name(), verdict);
      PoolVerdict before = verdicts.get(pool.name());
      if (!verdict.equals(before)) {
        log(pool, verdict, volumes.applyAsInt(pool.name()));
      }
    }
    if (!next.equals(verdicts)) {
      verdicts.clear();
      verdicts.putAll(next);
      Map<String, PoolVerdict> view = Collections.unmodifiableMap(new LinkedHashMap<>(next));
      listeners.forEach(l -> l.accept(view));
    }
  }

  private static void log(PoolConfig pool, PoolVerdict verdict, int volumes) {
    switch (verdict.state()) {
      case READY -> LOG.info("pool {} at {} is ready", pool.name(), pool.path());
      case REFUSED -> LOG.warn("pool {} refused: {}", pool.name(), verdict.reason());
      case NOT_SELECTED -> {
        if (volumes > 0) {
          LOG.warn(
              "pool {} is not selected on this node: {}; its {} volumes keep working, new volumes"
                  + " are refused",
              pool.name(),
              verdict.reason(),
              volumes);
        } else {
          LOG.info("pool {} not used on this node: {}", pool.name(), verdict.reason());
        }
      }
    }
  }
}

package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolCheck;
import dev.soko.driver.pool.PoolSelector;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.state.RecordState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configured pools on their way to open: each is checked (its node selector against the node's
 * labels, {@link PoolSelector}, then its directory, {@link PoolCheck}), and one that passes is
 * opened and recovered; a pool that passes but cannot be opened stays for the next try, which
 * {@link #notReady} makes. A refused or unselected pool is not opened (unless an earlier run left
 * volumes there, which keep working), offers no capacity and takes no new volumes; it is checked
 * again now and then ({@link PoolStates}), and at once when the node's labels change.
 */
final class PoolOpening {
  private static final Logger LOG = LoggerFactory.getLogger(PoolOpening.class);

  private final Catalog catalog;
  private final Backends backends;
  private final Exec exec;
  private final Recovery recovery;
  private final Runnable opened;
  private final PoolStates states;
  private final List<PoolConfig> unusablePools = new ArrayList<>();
  private final List<Recovery.Report> recoveryReports = new ArrayList<>();

  /**
   * Checks every pool of {@code config} and opens the ones that pass, into {@code catalog}; {@code
   * opened} runs after each pool opened, so that what depends on its volumes catches up.
   */
  PoolOpening(
      DriverConfig config,
      NodeLabels labels,
      Catalog catalog,
      Backends backends,
      Exec exec,
      Recovery recovery,
      Runnable opened) {
    this.catalog = catalog;
    this.backends = backends;
    this.exec = exec;
    this.recovery = recovery;
    this.opened = opened;
    PoolCheck directories =
        PoolCheck.forHost(
            config.kubeletDir(),
            (backend, directory, resolved) -> backends.of(backend).checkPool(directory, resolved));
    this.states =
        new PoolStates(
            config.pools(),
            pool -> {
              // Selection first: the directory of a pool that is not for this node is not looked
              // at.
              PoolVerdict selected = PoolSelector.verdict(pool, labels.state());
              PoolVerdict verdict = selected.ready() ? directories.check(pool) : selected;
              if (verdict.ready()) {
                tidy(pool.name());
              }
              return verdict;
            },
            System::nanoTime,
            this::volumeCount);
    unusablePools.addAll(config.pools());
    openPools();
    labels.onChange(this::nodeLabelsChanged);
  }

  /**
   * The re-check's housekeeping of an open pool (what deletes left for later): a pool re-checked
   * before it is opened has none yet, and recovery tidies it when it opens.
   */
  private void tidy(String poolName) {
    for (Pool pool : catalog.pools()) {
      if (pool.name().equals(poolName)) {
        try {
          backends.of(pool).tidy(pool);
        } catch (RuntimeException e) {
          LOG.warn("cannot tidy pool {}: {}", poolName, e.toString());
        }
      }
    }
  }

  /** A relabelled node: verdicts now, and a pool just selected opened at once. */
  private void nodeLabelsChanged() {
    states.recheck();
    notReady(); // opens the pools that are usable now
  }

  private int volumeCount(String pool) {
    return (int)
        catalog.volumes().values().stream()
            .filter(v -> v.state() == RecordState.READY && v.pool().equals(pool))
            .count();
  }

  /** Opens and recovers every pool not yet usable; a pool that fails stays for the next try. */
  private synchronized boolean openPools() {
    Map<String, PoolVerdict> verdicts = states.refresh();
    for (var it = unusablePools.iterator(); it.hasNext(); ) {
      PoolConfig poolConfig = it.next();
      if (!verdicts.get(poolConfig.name()).ready() && !PoolCheck.holdsPool(poolConfig.path())) {
        continue; // refused or not selected: nothing is written into its directory
      }
      try {
        Pool pool =
            Pool.open(poolConfig, backends.of(poolConfig.backend()).traits().layout(), exec);
        recoveryReports.add(recovery.run(pool));
        catalog.addPool(pool);
        it.remove();
        opened.run();
      } catch (RuntimeException e) {
        LOG.error("{}", e.getMessage());
      }
    }
    return failingPools(verdicts).isEmpty();
  }

  /** Pools that passed their checks but could not be opened. */
  private List<String> failingPools(Map<String, PoolVerdict> verdicts) {
    return unusablePools.stream()
        .map(PoolConfig::name)
        .filter(name -> verdicts.get(name).ready())
        .toList();
  }

  /** What start-up recovery repaired, one report per usable pool. */
  synchronized List<Recovery.Report> recoveryReports() {
    return List.copyOf(recoveryReports);
  }

  /** Empty once every configured pool is open; retries the ones that were not usable yet. */
  synchronized Optional<String> notReady() {
    if (unusablePools.isEmpty() || openPools()) {
      return Optional.empty();
    }
    // Names only: this answer may leave the node (a probe on the pod IP); the log has the errors.
    return Optional.of(
        "pools not usable yet: "
            + String.join(", ", failingPools(states.refresh()))
            + " (the driver log says why)");
  }

  /**
   * Tries the pools not usable yet again, if there are any: one refused at start may be mounted.
   */
  void retryUnusable() {
    if (!unusablePools.isEmpty()) {
      notReady();
    }
  }

  /** Throws RESOURCE_EXHAUSTED unless new volumes may go to {@code pool} ({@link PoolStates}). */
  void requireReady(String pool) {
    states.requireReady(pool);
  }

  /** Each pool's verdict, checked again when the last check is old. */
  Map<String, PoolVerdict> verdicts() {
    return states.refresh();
  }

  void onVerdicts(Consumer<Map<String, PoolVerdict>> listener) {
    states.onChange(listener);
  }
}

package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import java.util.Collection;
import java.util.Comparator;
import java.util.Objects;
import java.util.Optional;

/**
 * Several StorageClusters may claim one driver name; the oldest (then the alphabetically first)
 * keeps it and every other one is reported as a conflict and changes nothing.
 */
final class DriverNameConflicts {
  private DriverNameConflicts() {}

  /** The StorageCluster that owns {@code sc}'s driver name, if it is another one. */
  static Optional<StorageCluster> owner(StorageCluster sc, Collection<StorageCluster> all) {
    String driver = sc.getSpec().getDriver().getName();
    return all.stream()
        .filter(
            o -> o.getSpec() != null && Objects.equals(driver, o.getSpec().getDriver().getName()))
        .min(
            Comparator.comparing(
                    (StorageCluster o) -> o.getMetadata().getCreationTimestamp(),
                    Comparator.nullsLast(Comparator.naturalOrder()))
                .thenComparing(o -> o.getMetadata().getName()))
        .filter(o -> !o.getMetadata().getName().equals(sc.getMetadata().getName()));
  }
}

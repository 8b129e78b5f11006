package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import java.util.Collection;
import java.util.Comparator;
import java.util.Objects;
import java.util.Optional;

/**
 * Several StorageClusters may claim one driver name. The one whose name is on the existing
 * CSIDriver keeps it; without such a CSIDriver, the oldest (then alphabetically first) does. Every
 * other claimant is reported as a conflict and changes nothing. A CSIDriver that Soko did not
 * create is a conflict for every claimant.
 */
final class DriverNameConflicts {
  private DriverNameConflicts() {}

  /** Why {@code sc} may not install its driver, or empty when it may. */
  static Optional<String> conflict(
      StorageCluster sc, Collection<StorageCluster> all, CSIDriver existing) {
    String driver = sc.getSpec().getDriver().getName();
    String name = sc.getMetadata().getName();
    if (existing != null) {
      var labels = existing.getMetadata().getLabels();
      String holder = labels == null ? null : labels.get(Names.LABEL_CLUSTER);
      if (holder == null) {
        return Optional.of(
            "a CSIDriver named "
                + driver
                + " exists and was not created by Soko; nothing was changed");
      }
      boolean holderClaims =
          all.stream()
              .anyMatch(
                  o ->
                      o.getMetadata().getName().equals(holder)
                          && o.getSpec() != null
                          && Objects.equals(driver, o.getSpec().getDriver().getName()));
      if (holderClaims) {
        return holder.equals(name) ? Optional.empty() : Optional.of(message(driver, holder));
      }
    }
    return all.stream()
        .filter(
            o -> o.getSpec() != null && Objects.equals(driver, o.getSpec().getDriver().getName()))
        .filter(
            o ->
                o.getMetadata().getDeletionTimestamp() == null
                    || o.getMetadata().getName().equals(name))
        .min(
            Comparator.comparing(
                    (StorageCluster o) -> o.getMetadata().getCreationTimestamp(),
                    Comparator.nullsLast(Comparator.naturalOrder()))
                .thenComparing(o -> o.getMetadata().getName()))
        .filter(o -> !o.getMetadata().getName().equals(name))
        .map(o -> message(driver, o.getMetadata().getName()));
  }

  private static String message(String driver, String owner) {
    return "driver name "
        + driver
        + " is already used by StorageCluster "
        + owner
        + "; nothing was changed";
  }
}

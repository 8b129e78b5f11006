package dev.soko.operator.model;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The cross-field checks of the CRD's CEL rules, repeated for {@code render} (no API server) and
 * for clusters where an old CRD without the rules is installed, and the checks admission cannot
 * make ({@link ResourceChecks}, {@link PoolChecks}, {@link FilesystemChecks}); the reconciler
 * reports them in status (InvalidSpec). Returns readable problems that name the field.
 */
public final class SpecValidator {
  private SpecValidator() {}

  public static List<String> problems(StorageClusterSpec spec) {
    List<String> problems = new ArrayList<>();
    if (spec == null) {
      return List.of("spec is missing");
    }
    if (spec.getPools() == null || spec.getPools().isEmpty()) {
      problems.add("spec.pools must list at least one pool");
      return problems;
    }
    PoolChecks.check(spec.getPools(), problems);
    FilesystemChecks.check(spec, problems);
    EncryptedClasses.check(spec, problems);
    ResourceChecks.check(spec, problems);
    Set<String> pools = new HashSet<>();
    for (PoolSpec p : spec.getPools()) {
      if (p.getName() == null || p.getPath() == null) {
        problems.add("every pool needs a name and a path");
      } else if (!pools.add(p.getName())) {
        problems.add("pool names must be unique: '" + p.getName() + "' appears twice");
      }
    }
    Set<String> classes = new HashSet<>();
    int defaults = 0;
    for (StorageClassSpec c : spec.getStorageClasses()) {
      if (!classes.add(c.getName())) {
        problems.add("storage class names must be unique: '" + c.getName() + "' appears twice");
      }
      if (!pools.contains(c.getPool())) {
        problems.add(
            "storage class '" + c.getName() + "' names unknown pool '" + c.getPool() + "'");
      }
      if (Boolean.TRUE.equals(c.getDefaultClass())) {
        defaults++;
      }
    }
    if (defaults > 1) {
      problems.add("at most one storage class may be marked default");
    }
    if (KubeletRegistration.of(spec) == Registration.Sidecars
        && Integer.valueOf(KubeletRegistration.REGISTRAR_HEALTH_PORT)
            .equals(spec.getDriver().getMetricsPort())) {
      problems.add(
          "with driver.registration Sidecars, driver.metricsPort must not be 9809, the health port"
              + " of node-driver-registrar");
    }
    Integer metricsPort = spec.getDriver() == null ? null : spec.getDriver().getMetricsPort();
    if (Integer.valueOf(Containers.RESIZER_HTTP_PORT).equals(metricsPort)) {
      problems.add(
          "driver.metricsPort must not be "
              + Containers.RESIZER_HTTP_PORT
              + ", the http endpoint (leader-election health) of the controller pod's csi-resizer");
    }
    if (Integer.valueOf(DataTls.PORT).equals(metricsPort)) {
      problems.add(
          "driver.metricsPort must not be " + DataTls.PORT + ", the node plugin's data port");
    }
    if (metricsPort != null
        && (metricsPort == SnapshotMetadata.HTTP_PORT
            || metricsPort == SnapshotMetadata.GRPC_PORT)) {
      problems.add(
          "driver.metricsPort must not be "
              + metricsPort
              + ", a port of the controller pod's csi-snapshot-metadata");
    }
    return problems;
  }
}

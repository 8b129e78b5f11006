package dev.soko.operator.model;

import dev.soko.api.v1alpha1.StorageClusterSpec;
import java.util.ArrayList;
import java.util.List;

/** Checks that the cluster serves what the chosen sidecars need. */
public final class Compatibility {
  private Compatibility() {}

  /** Readable problems; empty when compatible. */
  public static List<String> problems(
      StorageClusterSpec spec, VersionsTable table, ClusterFacts facts) {
    List<String> problems = new ArrayList<>();
    KubernetesVersion v = facts.version();
    if (!table.supports(v)) {
      problems.add(
          "Kubernetes "
              + v.minorVersion()
              + " is older than the oldest supported 1."
              + table.oldestSupportedMinor()
              + "; using the oldest image set");
    }
    boolean snapshotsWanted = Boolean.TRUE.equals(spec.getSnapshots().getEnabled());
    List<String> missing = new ArrayList<>();
    for (String api : table.rowFor(v).requiredApis()) {
      boolean snapshotApi = api.startsWith("snapshot.storage.k8s.io/");
      if (snapshotApi && !snapshotsWanted) {
        continue;
      }
      if (!facts.serves(api)) {
        missing.add(api);
      }
    }
    if (!missing.isEmpty()) {
      problems.add(
          "the sidecars for Kubernetes "
              + v.minorVersion()
              + " need APIs this cluster does not serve: "
              + String.join(", ", missing)
              + (missing.stream().anyMatch(a -> a.startsWith("snapshot."))
                  ? " (install the snapshot CRDs and controller, or set spec.snapshots.enabled"
                      + " false; snapshots stay off until then)"
                  : ""));
    }
    return problems;
  }
}

package dev.soko.operator.model;

import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.math.BigDecimal;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Checks of the per-container resources that the CRD cannot make on every supported Kubernetes
 * version (CEL compares quantities only from 1.29 on, the versions table starts at 1.28): a request
 * above its limit, which the API server refuses in the DaemonSet or Deployment, after the
 * StorageCluster was accepted. The key checks repeat the CRD's rules for {@code render} and for an
 * older CRD without them.
 */
final class ResourceChecks {
  /** The containers of the node pods, whose names the keys of nodePlugin.resources must be. */
  static final Set<Component> NODE =
      EnumSet.of(
          Component.DRIVER,
          Component.PROVISIONER,
          Component.SNAPSHOTTER,
          Component.REGISTRAR,
          Component.LIVENESS_PROBE);

  /**
   * The containers of the controller pods (the health monitor is never deployed), by name: the
   * group snapshotter is a second csi-snapshotter.
   */
  static final Set<String> CONTROLLER =
      Set.of(
          Component.DRIVER.key(),
          Component.RESIZER.key(),
          ControllerDeployment.GROUP_SNAPSHOTTER,
          Component.SNAPSHOT_METADATA.key(),
          Component.LIVENESS_PROBE.key());

  private ResourceChecks() {}

  static void check(StorageClusterSpec spec, List<String> problems) {
    if (spec.getDriver() != null) {
      limits("spec.driver.resources", spec.getDriver().getResources(), problems);
    }
    boolean sidecars = KubeletRegistration.of(spec) == Registration.Sidecars;
    boolean snapshots =
        spec.getSnapshots() == null || !Boolean.FALSE.equals(spec.getSnapshots().getEnabled());
    if (spec.getNodePlugin() != null) {
      Set<Component> running = EnumSet.copyOf(NODE);
      if (!sidecars) {
        running.removeAll(EnumSet.of(Component.REGISTRAR, Component.LIVENESS_PROBE));
      }
      if (!snapshots) {
        running.remove(Component.SNAPSHOTTER);
      }
      perContainer(
          "spec.nodePlugin.resources",
          spec.getNodePlugin().getResources(),
          keys(running),
          problems);
    }
    if (spec.getController() != null) {
      // The group snapshotter counts as running with snapshots on: whether the cluster serves
      // group snapshots is no fact of the spec, and resources for it are harmless where it does
      // not.
      Set<String> running = new TreeSet<>(CONTROLLER);
      if (!sidecars) {
        running.remove(Component.LIVENESS_PROBE.key());
      }
      if (!snapshots) {
        running.remove(ControllerDeployment.GROUP_SNAPSHOTTER);
      }
      perContainer(
          "spec.controller.resources", spec.getController().getResources(), running, problems);
    }
  }

  private static void perContainer(
      String field,
      Map<String, ResourceRequirements> resources,
      Set<String> running,
      List<String> problems) {
    if (resources == null) {
      return;
    }
    resources.forEach(
        (container, requirements) -> {
          if (!running.contains(container)) {
            problems.add(
                field
                    + " names '"
                    + container
                    + "', which is no container these pods run here; they run "
                    + running.stream().sorted().toList());
          }
          limits(field + "." + container, requirements, problems);
        });
  }

  private static Set<String> keys(Set<Component> components) {
    return components.stream().map(Component::key).collect(Collectors.toSet());
  }

  /** A request above its limit: Kubernetes refuses the pod template. */
  private static void limits(String field, ResourceRequirements r, List<String> problems) {
    if (r == null || r.getRequests() == null || r.getLimits() == null) {
      return;
    }
    r.getRequests()
        .forEach(
            (name, request) -> {
              Quantity limit = r.getLimits().get(name);
              BigDecimal requested = amount(request);
              BigDecimal limited = amount(limit);
              if (requested != null && limited != null && requested.compareTo(limited) > 0) {
                problems.add(
                    field
                        + ".requests."
                        + name
                        + " ("
                        + request
                        + ") must not exceed "
                        + field
                        + ".limits."
                        + name
                        + " ("
                        + limit
                        + ")");
              }
            });
  }

  private static BigDecimal amount(Quantity q) {
    if (q == null) {
      return null;
    }
    try {
      return q.getNumericalAmount();
    } catch (IllegalArgumentException e) {
      return null; // the schema refuses malformed quantities; nothing to compare here
    }
  }
}

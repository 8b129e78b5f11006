package dev.soko.operator.model;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The namespace of the driver's workloads. Soko creates it when it is absent, and then declares
 * what its node plugin needs: the pods are privileged (loop devices, mounts with Bidirectional
 * propagation), so Pod Security admission must enforce the {@code privileged} level there, or a
 * cluster whose default is {@code baseline} refuses them. {@code warn} and {@code audit} say the
 * same: at a stricter level they would flag, on every rollout, the one thing the namespace exists
 * for. No version labels: the privileged level has no checks to pin.
 *
 * <p>A namespace that exists without Soko's label was made by someone else (for example {@code helm
 * install --create-namespace} of the operator itself). Soko does not apply it: relabelling it would
 * relax Pod Security for every other workload in it, and a namespace Soko took over would also be
 * deleted on uninstall. It stays as its owner made it; when its level would refuse the node plugin,
 * the status says which label is missing.
 */
public final class OperandNamespace {
  public static final String ENFORCE = "pod-security.kubernetes.io/enforce";
  static final String PRIVILEGED = "privileged";

  /** The Pod Security labels of a namespace Soko creates, in a fixed order (the applied hash). */
  static final Map<String, String> POD_SECURITY = podSecurity();

  private OperandNamespace() {}

  /** The namespace Soko creates, with its own labels and the Pod Security ones. */
  static Namespace build(Names n) {
    ObjectMeta meta = Rbac.meta(n, n.namespace(), null, "namespace");
    Map<String, String> labels = new LinkedHashMap<>(meta.getLabels());
    labels.putAll(POD_SECURITY);
    meta.setLabels(labels);
    return new NamespaceBuilder().withMetadata(meta).build();
  }

  /** What the admin should know about a namespace Soko does not manage; null when nothing. */
  static String notice(ClusterFacts.ForeignNamespace ns) {
    String enforce = ns.podSecurityEnforce();
    if (PRIVILEGED.equals(enforce)) {
      return null;
    }
    String prefix = "namespace " + ns.name() + " was not created by Soko, which leaves its labels";
    String fix = "label it " + ENFORCE + "=" + PRIVILEGED;
    return enforce == null
        ? prefix
            + " alone; it has no "
            + ENFORCE
            + " label, so the cluster's default Pod Security level applies: if that is stricter"
            + " than privileged, the node plugin's privileged pods are refused; "
            + fix
        : prefix
            + " alone; it enforces Pod Security level '"
            + enforce
            + "', which refuses the node plugin's privileged pods unless they are exempt; "
            + fix;
  }

  private static Map<String, String> podSecurity() {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(ENFORCE, PRIVILEGED);
    labels.put("pod-security.kubernetes.io/audit", PRIVILEGED);
    labels.put("pod-security.kubernetes.io/warn", PRIVILEGED);
    return Collections.unmodifiableMap(labels);
  }
}

package dev.soko.operator.support;

import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an object loses before it enters a support bundle. The bundle is meant to be handed to
 * someone outside the cluster, so it carries no credential and nothing that might be one:
 *
 * <ul>
 *   <li>Secrets are refused outright (the collector never lists them either);
 *   <li>{@code metadata.managedFields} and the {@code last-applied-configuration} annotation, which
 *       repeat the object (and so whatever was removed from it);
 *   <li>every literal {@code env[].value} of a container, init or ephemeral container, in a pod or
 *       a pod template, replaced by {@value #REDACTED}: a value may be a password written inline.
 *       {@code valueFrom} references name a key, not its value, and stay;
 *   <li>a ServiceAccount's {@code secrets} list (the names of its token Secrets).
 * </ul>
 *
 * Works on the object's JSON tree, so typed and generic resources are redacted alike.
 */
public final class Redaction {
  public static final String REDACTED = "<redacted>";
  static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
  private static final List<String> CONTAINER_LISTS =
      List.of("containers", "initContainers", "ephemeralContainers");

  private Redaction() {}

  /** The object as YAML, redacted; refuses a Secret. */
  public static String yaml(Object object) {
    return Serialization.asYaml(redact(object));
  }

  /** A redacted copy of the object's tree; the object itself is left as it was. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> redact(Object object) {
    Map<String, Object> tree = Serialization.jsonMapper().convertValue(object, LinkedHashMap.class);
    if ("Secret".equals(tree.get("kind"))) {
      throw new IllegalArgumentException("a Secret never enters a support bundle");
    }
    if (tree.get("metadata") instanceof Map<?, ?> meta) {
      Map<String, Object> m = (Map<String, Object>) meta;
      m.remove("managedFields");
      if (m.get("annotations") instanceof Map<?, ?> annotations) {
        annotations.remove(LAST_APPLIED);
        if (annotations.isEmpty()) {
          m.remove("annotations");
        }
      }
    }
    if ("ServiceAccount".equals(tree.get("kind"))) {
      tree.remove("secrets");
    }
    if (tree.get("spec") instanceof Map<?, ?> spec) {
      redactPodSpec((Map<String, Object>) spec);
      // Deployment, DaemonSet, StatefulSet, ReplicaSet, Job: spec.template.spec
      if (spec.get("template") instanceof Map<?, ?> template
          && template.get("spec") instanceof Map<?, ?> podSpec) {
        redactPodSpec((Map<String, Object>) podSpec);
      }
    }
    return tree;
  }

  @SuppressWarnings("unchecked")
  private static void redactPodSpec(Map<String, Object> podSpec) {
    for (String list : CONTAINER_LISTS) {
      if (!(podSpec.get(list) instanceof List<?> containers)) {
        continue;
      }
      for (Object container : containers) {
        if (container instanceof Map<?, ?> c && c.get("env") instanceof List<?> env) {
          List<Object> redacted = new ArrayList<>();
          for (Object var : env) {
            if (var instanceof Map<?, ?> v && v.containsKey("value")) {
              Map<String, Object> copy = new LinkedHashMap<>((Map<String, Object>) v);
              copy.put("value", REDACTED);
              redacted.add(copy);
            } else {
              redacted.add(var);
            }
          }
          ((Map<String, Object>) c).put("env", redacted);
        }
      }
    }
  }
}

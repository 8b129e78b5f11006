package dev.soko.operator.reconcile.apply;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether an object on the server already carries every field Soko sets. The server adds defaults
 * and status, so the comparison is "desired is contained in actual", never equality.
 */
final class SubsetMatcher {
  /** Metadata the server owns; only labels, annotations, name and namespace are ours. */
  private static final Set<String> OUR_METADATA =
      Set.of("name", "namespace", "labels", "annotations");

  private SubsetMatcher() {}

  @SuppressWarnings("unchecked")
  static boolean matches(HasMetadata desired, HasMetadata actual) {
    Map<String, Object> d = Serialization.jsonMapper().convertValue(desired, Map.class);
    Map<String, Object> a = Serialization.jsonMapper().convertValue(actual, Map.class);
    Map<String, Object> dMeta = (Map<String, Object>) d.remove("metadata");
    Map<String, Object> aMeta = (Map<String, Object>) a.remove("metadata");
    if (dMeta != null) {
      dMeta.keySet().retainAll(OUR_METADATA);
    }
    return contained(dMeta, aMeta) && contained(d, a);
  }

  @SuppressWarnings("unchecked")
  static boolean contained(Object desired, Object actual) {
    if (desired == null) {
      return true;
    }
    if (desired instanceof Map<?, ?> dm) {
      if (dm.isEmpty()) {
        return actual == null || actual instanceof Map<?, ?>;
      }
      if (!(actual instanceof Map<?, ?> am)) {
        return false;
      }
      for (Map.Entry<?, ?> e : dm.entrySet()) {
        if (!contained(e.getValue(), am.get(e.getKey()))) {
          return false;
        }
      }
      return true;
    }
    if (desired instanceof List<?> dl) {
      if (dl.isEmpty()) {
        return actual == null || (actual instanceof List<?> al && al.isEmpty());
      }
      if (!(actual instanceof List<?> al) || al.size() != dl.size()) {
        return false;
      }
      for (int i = 0; i < dl.size(); i++) {
        if (!contained(dl.get(i), al.get(i))) {
          return false;
        }
      }
      return true;
    }
    // Scalars: compare text so that 1 (int) equals 1 (long) and 1.0 equals 1.0.
    return actual != null && String.valueOf(desired).equals(String.valueOf(actual));
  }
}

package dev.soko.operator.reconcile.apply;

import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIDriverSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Objects;

/**
 * CSIDriver's attachRequired, podInfoOnMount, fsGroupPolicy and volumeLifecycleModes are immutable.
 * When the server's object differs in one of the fields Soko sets, the object is deleted so that
 * the following apply recreates it. An explicit reconcile step, not a side effect.
 */
public final class CsiDriverReplacer {
  private final KubernetesClient client;

  public CsiDriverReplacer(KubernetesClient client) {
    this.client = client;
  }

  /** Returns a description of the changed fields when it deleted the CSIDriver, else null. */
  public String replaceIfImmutableChanged(CSIDriver desired, ClusterCache cache) {
    CSIDriver actual = ClusterObserver.csiDriver(cache, desired.getMetadata().getName());
    if (actual == null) {
      return null;
    }
    String changed = immutableDifferences(desired.getSpec(), actual.getSpec());
    if (changed.isEmpty()) {
      return null;
    }
    // A CSIDriver has no finalizers: the delete is done when the call returns.
    client.resource(actual).delete();
    return changed;
  }

  static String immutableDifferences(CSIDriverSpec want, CSIDriverSpec have) {
    StringBuilder sb = new StringBuilder();
    diff(sb, "attachRequired", want.getAttachRequired(), have.getAttachRequired());
    diff(sb, "podInfoOnMount", want.getPodInfoOnMount(), have.getPodInfoOnMount());
    diff(sb, "fsGroupPolicy", want.getFsGroupPolicy(), have.getFsGroupPolicy());
    diff(
        sb, "volumeLifecycleModes", want.getVolumeLifecycleModes(), have.getVolumeLifecycleModes());
    return sb.toString();
  }

  /** Appends "field have -> want" when the field is set and differs. */
  static void diff(StringBuilder sb, String field, Object want, Object have) {
    if (want != null && !Objects.equals(want, have)) {
      if (sb.length() > 0) {
        sb.append(", ");
      }
      sb.append(field).append(' ').append(have).append(" -> ").append(want);
    }
  }
}

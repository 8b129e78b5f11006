package dev.soko.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Locale;

/**
 * The reason and message a failed reconcile puts in status: the API server's own message, with a
 * reason an admin can act on (admission denial, quota, conflict, missing API, permission).
 */
record ReconcileFailure(String reason, String message) {
  /** Longest message kept; server messages can carry whole objects. */
  static final int MAX_MESSAGE = 1024;

  /** An apply the API server refused, naming the object. */
  static final class ApplyRefused extends RuntimeException {
    final transient HasMetadata object;

    ApplyRefused(HasMetadata object, KubernetesClientException cause) {
      super(describe(object) + ": " + cause.getMessage(), cause);
      this.object = object;
    }
  }

  /**
   * Whether the failure is a lost race on the StorageCluster itself (its status patch met a newer
   * version): JOSDK retries with the newer object, and status has nothing to report.
   */
  static boolean staleStorageCluster(Exception e) {
    Throwable t = e;
    while (t != null) {
      if (t instanceof ApplyRefused) {
        return false;
      }
      if (t instanceof KubernetesClientException k) {
        return k.getCode() == 409;
      }
      t = t.getCause();
    }
    return false;
  }

  static ReconcileFailure of(Exception e) {
    // JOSDK wraps what the reconcile threw.
    Throwable t = e;
    while (t != null && !(t instanceof ApplyRefused) && !(t instanceof KubernetesClientException)) {
      t = t.getCause();
    }
    if (t instanceof ApplyRefused refused) {
      KubernetesClientException cause = (KubernetesClientException) refused.getCause();
      return new ReconcileFailure(
          reason(cause),
          bounded("apply of " + describe(refused.object) + " refused: " + serverMessage(cause)));
    }
    if (t instanceof KubernetesClientException k) {
      return new ReconcileFailure(reason(k), bounded(serverMessage(k)));
    }
    return new ReconcileFailure(
        "ReconcileError", bounded(e.getClass().getSimpleName() + ": " + e.getMessage()));
  }

  static String reason(KubernetesClientException e) {
    String message = serverMessage(e).toLowerCase(Locale.ROOT);
    if (message.contains("denied request") || message.contains("admission webhook")) {
      // A ValidatingAdmissionPolicy or webhook, whatever status code its reason maps to.
      return "AdmissionDenied";
    }
    return switch (e.getCode()) {
      case 403 -> message.contains("exceeded quota") ? "QuotaExceeded" : "Forbidden";
      case 404 -> "ApiMissing";
      case 409 -> "Conflict";
      case 400, 422 -> "Invalid";
      default -> "ApplyFailed";
    };
  }

  private static String serverMessage(KubernetesClientException e) {
    if (e.getStatus() != null && e.getStatus().getMessage() != null) {
      return e.getStatus().getMessage();
    }
    return String.valueOf(e.getMessage());
  }

  private static String describe(HasMetadata o) {
    String ns = o.getMetadata().getNamespace();
    return o.getKind() + " " + (ns == null ? "" : ns + "/") + o.getMetadata().getName();
  }

  private static String bounded(String message) {
    return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE) + "...";
  }
}

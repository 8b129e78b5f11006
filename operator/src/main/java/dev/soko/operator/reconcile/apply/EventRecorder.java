package dev.soko.operator.reconcile.apply;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.util.Locale;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes events on a StorageCluster (or another object it concerns), for notable transitions
 * only (never on a no-op resync). Cluster-scoped objects' events live in the "default" namespace,
 * where kubectl describe finds them; a namespaced object's in its own.
 */
public final class EventRecorder {
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  static final String NAMESPACE = "default";

  private final KubernetesClient client;

  public EventRecorder(KubernetesClient client) {
    this.client = client;
  }

  public void normal(StorageCluster sc, String reason, String message) {
    record(sc, "Normal", reason, message);
  }

  public void warning(StorageCluster sc, String reason, String message) {
    record(sc, "Warning", reason, message);
  }

  /**
   * A Warning on an object other than a StorageCluster: in the object's namespace when it has one
   * (a VolumeSnapshot's, where kubectl describe finds it), else in "default".
   */
  public void warningOn(HasMetadata object, String reason, String message) {
    record(object, "Warning", reason, message);
  }

  private void record(HasMetadata object, String type, String reason, String message) {
    String now = Instant.now().toString();
    String namespace =
        object.getMetadata().getNamespace() == null
            ? NAMESPACE
            : object.getMetadata().getNamespace();
    // An Event's name is a DNS subdomain of at most 253 characters, as the object's may be.
    String name = object.getMetadata().getName();
    String prefix = name.length() <= 200 ? name : object.getKind().toLowerCase(Locale.ROOT);
    try {
      client
          .v1()
          .events()
          .inNamespace(namespace)
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  .withName(prefix + "." + UUID.randomUUID())
                  .withNamespace(namespace)
                  .endMetadata()
                  .withNewInvolvedObject()
                  .withApiVersion(object.getApiVersion())
                  .withKind(object.getKind())
                  .withNamespace(object.getMetadata().getNamespace())
                  .withName(object.getMetadata().getName())
                  .withUid(object.getMetadata().getUid())
                  .endInvolvedObject()
                  .withType(type)
                  .withReason(reason)
                  .withMessage(message)
                  .withFirstTimestamp(now)
                  .withLastTimestamp(now)
                  .withCount(1)
                  .withNewSource("soko-operator", null)
                  .build())
          .create();
    } catch (KubernetesClientException e) {
      // An event is a courtesy; failing to record one must not fail the reconcile.
      LOG.warn(
          "could not record event {} on {}: {}",
          reason,
          object.getMetadata().getName(),
          e.getMessage());
    }
  }
}

package dev.soko.operator.reconcile.apply;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;

/**
 * Server-side apply with one field manager, skipped when the informer's copy of the object already
 * has what we want: the object's spec hash annotation equals the desired one (so removed fields are
 * noticed) and every field we set is present (so hand edits are noticed). A no-op reconcile makes
 * no call at all. What an apply returns goes into the cache, so the next reconcile compares against
 * it even before the informer's event arrives.
 */
public final class Applier {
  public static final String FIELD_MANAGER = "soko-operator";
  static final String HASH_ANNOTATION = "soko.dev/applied-hash";

  /**
   * The name the operator gave the object. A copy made under another name (kubectl get -o yaml,
   * Kubernetes' storage suite copying a StorageClass) keeps Soko's labels and annotations, and this
   * is how the pruner tells it from an object of its own.
   */
  static final String NAME_ANNOTATION = "soko.dev/applied-name";

  private final KubernetesClient client;

  public Applier(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Applies the object unless the cache shows it up to date; returns true when it wrote. A refusal
   * by the API server propagates as a {@link
   * io.fabric8.kubernetes.client.KubernetesClientException} for the reconciler's error boundary.
   */
  public boolean apply(HasMetadata desired, HasMetadata owner, ClusterCache cache) {
    HasMetadata withHash = withHashAndOwner(desired, owner);
    HasMetadata actual =
        cache
            .get(
                KindRegistry.of(withHash),
                withHash.getMetadata().getNamespace(),
                withHash.getMetadata().getName())
            .orElse(null);
    if (actual != null && upToDate(withHash, actual)) {
      return false;
    }
    HasMetadata applied =
        client.resource(withHash).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
    cache.written(actual, applied);
    return true;
  }

  static boolean upToDate(HasMetadata desired, HasMetadata actual) {
    String want = desired.getMetadata().getAnnotations().get(HASH_ANNOTATION);
    var annotations = actual.getMetadata().getAnnotations();
    return annotations != null
        && want.equals(annotations.get(HASH_ANNOTATION))
        && SubsetMatcher.matches(desired, actual);
  }

  static HasMetadata withHashAndOwner(HasMetadata desired, HasMetadata owner) {
    HasMetadata copy = Serialization.clone(desired);
    var annotations = new HashMap<String, String>();
    if (copy.getMetadata().getAnnotations() != null) {
      annotations.putAll(copy.getMetadata().getAnnotations());
    }
    annotations.put(HASH_ANNOTATION, hash(desired));
    annotations.put(NAME_ANNOTATION, desired.getMetadata().getName());
    copy.getMetadata().setAnnotations(annotations);
    if (owner != null && owner.getMetadata().getUid() != null) {
      // Garbage collection as a safety net; the finalizer does the ordered cleanup.
      OwnerReference ref =
          new OwnerReferenceBuilder()
              .withApiVersion(owner.getApiVersion())
              .withKind(owner.getKind())
              .withName(owner.getMetadata().getName())
              .withUid(owner.getMetadata().getUid())
              .withBlockOwnerDeletion(false)
              .withController(true)
              .build();
      copy.getMetadata().setOwnerReferences(List.of(ref));
    }
    return copy;
  }

  static String hash(HasMetadata desired) {
    try {
      // Map entries sorted by key: a map's iteration order (e.g. keyed by enums, whose hash codes
      // differ per JVM) must not change the hash, or every operator restart re-applies objects.
      byte[] json =
          Serialization.jsonMapper()
              .writer()
              .with(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
              .writeValueAsBytes(desired);
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(json);
      return HexFormat.of().formatHex(digest, 0, 12);
    } catch (NoSuchAlgorithmException | JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}

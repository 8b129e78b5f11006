package dev.soko.operator.reconcile.kinds;

import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import java.util.List;
import java.util.Objects;

/**
 * How {@link KindRegistry}'s entries are made from their few settings: a typed kind's apiVersion,
 * kind, plural and scope from fabric8's model class, the verbs of a kind the operator owns, the
 * watch of one it owns by label, so that each entry of the registry says only what is its own.
 */
final class KindTemplates {
  static final List<String> MANAGE = List.of("get", "list", "watch", "create", "patch", "delete");
  static final List<String> WATCH = List.of("get", "list", "watch");
  static final Kind.Bundle IN_NAMESPACES = Kind.Bundle.of(Kind.Bundle.Scope.IN_NAMESPACES);
  static final Kind.Bundle SOKOS = Kind.Bundle.of(Kind.Bundle.Scope.SOKOS);

  private KindTemplates() {}

  /**
   * A class of an optional snapshot API (cluster-scoped, generic): applied with the StorageClasses,
   * and watched whole, as someone else's default class changes whether Soko's may be the default.
   */
  static Kind snapshotClass(String apiVersion, String kind, String plural, String gate) {
    return new Kind(
        GenericKubernetesResource.class,
        apiVersion,
        kind,
        plural,
        false,
        gate,
        Kind.Use.OWNED,
        6,
        20,
        Kind.Watch.of(null, Kind.Mapping.BY_LABEL_OR_FOREIGN),
        MANAGE,
        Kind.Bundle.ofDrivers(
            c ->
                Objects.toString(
                    ((GenericKubernetesResource) c).getAdditionalProperties().get("driver"),
                    null)));
  }

  /** A typed kind the operator creates, watched by Soko's label when the mapping is by label. */
  static Kind owned(
      Class<? extends HasMetadata> type,
      int applyRank,
      int deleteRank,
      Kind.Mapping mapping,
      Kind.Bundle bundle) {
    String selector = mapping == Kind.Mapping.BY_LABEL ? Names.LABEL_CLUSTER : null;
    return typed(
        type,
        Kind.Use.OWNED,
        applyRank,
        deleteRank,
        Kind.Watch.of(selector, mapping),
        MANAGE,
        bundle);
  }

  /** A typed kind the operator reads (and watches, when {@code watch} is not null) or writes to. */
  static Kind observed(
      Class<? extends HasMetadata> type, Kind.Watch watch, List<String> verbs, Kind.Bundle bundle) {
    return typed(type, Kind.Use.OBSERVED, -1, -1, watch, verbs, bundle);
  }

  /** A typed kind only the support bundle reads, in Soko's namespaces. */
  static Kind collected(Class<? extends HasMetadata> type) {
    return typed(type, Kind.Use.COLLECTED, -1, -1, null, List.of(), IN_NAMESPACES);
  }

  /** apiVersion, kind, plural and scope as fabric8's model class declares them. */
  static Kind typed(
      Class<? extends HasMetadata> type,
      Kind.Use use,
      int applyRank,
      int deleteRank,
      Kind.Watch watch,
      List<String> verbs,
      Kind.Bundle bundle) {
    return new Kind(
        type,
        HasMetadata.getApiVersion(type),
        HasMetadata.getKind(type),
        HasMetadata.getPlural(type),
        Namespaced.class.isAssignableFrom(type),
        null,
        use,
        applyRank,
        deleteRank,
        watch,
        verbs,
        bundle);
  }
}

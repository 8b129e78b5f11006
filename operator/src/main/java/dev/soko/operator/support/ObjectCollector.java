package dev.soko.operator.support;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.reconcile.kinds.Kind;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The objects part of a support bundle: the kinds of the operator's {@link KindRegistry} that it
 * collects (each kind's {@link Kind.Bundle}), listed through the API and written redacted, one file
 * per object.
 */
final class ObjectCollector {
  private final KubernetesClient client;
  private final BundleSink sink;

  ObjectCollector(KubernetesClient client, BundleSink sink) {
    this.client = client;
    this.sink = sink;
  }

  /**
   * The registry's cluster-scoped kinds of the bundle: all of them, those of Soko's drivers, or
   * Soko's own; the claims of the volumes; a kind of an API the cluster may not serve (snapshots)
   * only when it does.
   */
  void collectClusterScoped(Set<String> drivers) {
    Map<String, Boolean> served = new LinkedHashMap<>();
    List<HasMetadata> volumes = List.of();
    for (Kind kind : KindRegistry.bundled()) {
      if (kind.namespaced() && kind.bundle().scope() != Kind.Bundle.Scope.CLAIMS_OF_VOLUMES
          || kind == KindRegistry.STORAGE_CLUSTER
          || !served(kind, served)) {
        continue;
      }
      switch (kind.bundle().scope()) {
        case ALL -> list("cluster", kind, o -> true);
        case SOKOS -> list("cluster", kind, SupportBundle::ownedBySoko);
        case OF_DRIVERS -> {
          List<HasMetadata> kept =
              list("cluster", kind, o -> drivers.contains(kind.bundle().driver().apply(o)));
          if (kind == KindRegistry.PERSISTENT_VOLUME) {
            volumes = kept;
          }
        }
        case CLAIMS_OF_VOLUMES -> claims(volumes);
        case IN_NAMESPACES -> {}
      }
    }
    served.forEach(
        (api, yes) -> {
          if (!yes) {
            sink.note("skipped " + skippedKinds(api) + ": " + api + " not served");
          }
        });
  }

  /**
   * Whether the cluster serves the kind's API, asked once per API. Soko's own CRDs are listed
   * without asking: a failed list says more than a skip.
   */
  private boolean served(Kind kind, Map<String, Boolean> served) {
    if (kind.gate() == null || kind.group().equals(StorageCluster.GROUP)) {
      return true;
    }
    return served.computeIfAbsent(
        kind.apiVersion(),
        api ->
            Boolean.TRUE.equals(
                sink.attempt("discover " + api, () -> client.supports(api, kind.kind()))));
  }

  private static String skippedKinds(String apiVersion) {
    return KindRegistry.bundled().stream()
        .filter(k -> k.apiVersion().equals(apiVersion))
        .map(Kind::kind)
        .collect(Collectors.joining(", "));
  }

  /** The claims of the collected volumes, one by one: their namespaces are the users'. */
  private void claims(List<HasMetadata> volumes) {
    for (HasMetadata o : volumes) {
      var ref = ((PersistentVolume) o).getSpec().getClaimRef();
      if (ref == null || ref.getNamespace() == null || ref.getName() == null) {
        continue;
      }
      PersistentVolumeClaim pvc =
          sink.attempt(
              "get PersistentVolumeClaim " + ref.getNamespace() + "/" + ref.getName(),
              () ->
                  client
                      .persistentVolumeClaims()
                      .inNamespace(ref.getNamespace())
                      .withName(ref.getName())
                      .get());
      if (pvc != null) {
        writeObject("namespaces/" + ref.getNamespace() + "/PersistentVolumeClaim", pvc);
      }
    }
  }

  /** Everything of the registry's namespaced kinds of the bundle; Secrets are not among them. */
  void collectNamespace(String ns) {
    for (Kind kind : KindRegistry.bundled()) {
      if (kind.bundle().scope() == Kind.Bundle.Scope.IN_NAMESPACES) {
        list("namespaces/" + ns, kind, o -> true);
      }
    }
  }

  /** Lists a kind (in the directory's namespace, for a namespaced one) and writes what it keeps. */
  List<HasMetadata> list(String dir, Kind kind, Predicate<HasMetadata> keep) {
    String ns = dir.startsWith("namespaces/") ? dir.substring("namespaces/".length()) : null;
    List<HasMetadata> items =
        sink.attempt(
            "list " + kind.kind() + (ns == null ? "" : " in " + dir),
            () -> List.<HasMetadata>copyOf(lister(kind, ns).get().getItems()));
    if (items == null) {
      return List.of();
    }
    List<HasMetadata> kept = items.stream().filter(keep).toList();
    for (HasMetadata item : kept) {
      writeObject(dir + "/" + kind.kind(), item);
    }
    return kept;
  }

  @SuppressWarnings("unchecked")
  private Supplier<KubernetesResourceList<? extends HasMetadata>> lister(Kind kind, String ns) {
    if (kind.generic()) {
      var generic = client.genericKubernetesResources(kind.apiVersion(), kind.kind());
      return () -> ns == null ? generic.list() : generic.inNamespace(ns).list();
    }
    var typed = client.resources((Class<HasMetadata>) kind.type());
    return () -> ns == null ? typed.list() : typed.inNamespace(ns).list();
  }

  private void writeObject(String dir, HasMetadata object) {
    String entry = dir + "/" + object.getMetadata().getName() + ".yaml";
    try {
      sink.add(entry, Redaction.yaml(object));
      sink.count(dir.substring(dir.lastIndexOf('/') + 1));
    } catch (RuntimeException e) {
      sink.failed(entry + ": " + SupportBundle.message(e));
    }
  }
}

package dev.soko.operator.reconcile.kinds;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/** A {@link ClusterCache} holding what a test puts in it, and recording what was written. */
public final class FakeClusterCache implements ClusterCache {
  public final List<HasMetadata> objects = new ArrayList<>();
  public final List<HasMetadata> written = new ArrayList<>();

  public FakeClusterCache with(HasMetadata o) {
    objects.add(o);
    return this;
  }

  @Override
  public Optional<HasMetadata> get(Kind kind, String namespace, String name) {
    return objects.stream()
        .filter(o -> KindRegistry.of(o) == kind)
        .filter(o -> Objects.equals(o.getMetadata().getNamespace(), namespace))
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst();
  }

  @Override
  public List<HasMetadata> list(Kind kind, Predicate<HasMetadata> filter) {
    return objects.stream().filter(o -> KindRegistry.of(o) == kind).filter(filter).toList();
  }

  @Override
  public List<HasMetadata> indexed(Kind kind, String key) {
    return list(kind, o -> key.equals(kind.watch().index().apply(o)));
  }

  @Override
  public boolean watches(Kind kind) {
    return true;
  }

  @Override
  public void written(HasMetadata before, HasMetadata after) {
    written.add(after);
  }
}

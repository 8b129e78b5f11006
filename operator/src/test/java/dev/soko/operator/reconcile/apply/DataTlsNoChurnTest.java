package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.datatls.DataTlsCertificates;
import dev.soko.operator.model.Names;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The data path's Secrets through the reconcile's own steps: observed from the cache, kept by the
 * certificates, compared by the applier. A second reconcile over what the first applied sends
 * nothing to the API server; one at a renewal sends exactly the renewed Secrets.
 */
class DataTlsNoChurnTest {
  private static final Names N = new Names("fast", "soko-fast");
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final HasMetadata OWNER =
      new ConfigMapBuilder()
          .withNewMetadata()
          .withName("fast")
          .withUid("u-1")
          .endMetadata()
          .build();

  private final DataTlsCertificates certificates = new DataTlsCertificates(Duration.ofMinutes(10));

  @Test
  void aSecondReconcileOverWhatTheFirstAppliedWritesNothing() {
    FakeClusterCache cache = new FakeClusterCache();
    List<Secret> first = reconcile(cache, T0);
    assertThat(first).hasSize(3);
    first.forEach(s -> cache.with(served(s)));

    List<Secret> second = reconcile(cache, T0.plus(Duration.ofDays(1)));
    assertThat(second).isEqualTo(first);
    // A null client: any call would throw.
    Applier applier = new Applier(null);
    for (Secret s : second) {
      assertThat(applier.apply(s, OWNER, cache)).as(s.getMetadata().getName()).isFalse();
    }
    assertThat(cache.written).isEmpty();
  }

  @Test
  void aRenewalChangesOnlyTheRenewedSecrets() {
    FakeClusterCache cache = new FakeClusterCache();
    List<Secret> first = reconcile(cache, T0);
    first.forEach(s -> cache.with(served(s)));

    List<Secret> renewed = reconcile(cache, T0.plus(Duration.ofDays(21)));
    List<String> changed =
        renewed.stream()
            .filter(s -> !Applier.upToDate(Applier.withHashAndOwner(s, OWNER), find(cache, s)))
            .map(s -> s.getMetadata().getName())
            .toList();
    assertThat(changed).containsExactly(N.dataTls("node"), N.dataTls("controller"));
  }

  private List<Secret> reconcile(FakeClusterCache cache, Instant now) {
    return certificates.desired(N, ClusterObserver.dataTlsSecrets(N, cache), now).secrets();
  }

  /** What the API server returns for an applied Secret. */
  private static Secret served(Secret desired) {
    Secret s = (Secret) Applier.withHashAndOwner(desired, OWNER);
    s.getMetadata().setResourceVersion("7");
    s.getMetadata().setUid("s-" + desired.getMetadata().getName());
    return s;
  }

  private static HasMetadata find(FakeClusterCache cache, Secret s) {
    return cache.objects.stream()
        .filter(o -> o.getMetadata().getName().equals(s.getMetadata().getName()))
        .findFirst()
        .orElseThrow();
  }
}

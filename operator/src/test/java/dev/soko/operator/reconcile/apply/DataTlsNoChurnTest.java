package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.datatls.DataTlsCertificates;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.SnapshotMetadata;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Secrets of the operator's CA through the reconcile's own steps: observed from the cache, kept
 * by the certificates, rendered, compared by the applier. A second reconcile over what the first
 * applied sends nothing to the API server; one at a renewal sends exactly the renewed Secrets.
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

  /**
   * The snapshot metadata sidecar's Secret and its SnapshotMetadataService (whose caCert is the CA
   * bundle) with the data path's: a reconcile over what the first applied writes nothing; one at
   * the serving certificate's renewal writes its Secret alone, the CA bundle being the same.
   */
  @Test
  void theSidecarsCertificateAndCaCertAreKeptToo() {
    FakeClusterCache cache = new FakeClusterCache();
    List<HasMetadata> first = reconcileWithSidecar(cache, T0);
    assertThat(first)
        .extracting(o -> o.getMetadata().getName())
        .contains(SnapshotMetadata.secretName(N), "fast.csi.soko.dev");
    first.forEach(o -> cache.with(served(o)));

    List<HasMetadata> second = reconcileWithSidecar(cache, T0.plus(Duration.ofDays(1)));
    assertThat(second).isEqualTo(first);
    Applier applier = new Applier(null);
    for (HasMetadata o : second) {
      assertThat(applier.apply(o, OWNER, cache)).as(o.getMetadata().getName()).isFalse();
    }
    assertThat(cache.written).isEmpty();

    List<String> changed =
        reconcileWithSidecar(cache, T0.plus(Duration.ofDays(21))).stream()
            .filter(o -> !Applier.upToDate(Applier.withHashAndOwner(o, OWNER), find(cache, o)))
            .map(o -> o.getMetadata().getName())
            .toList();
    assertThat(changed)
        .containsExactlyInAnyOrder(
            N.dataTls("node"), N.dataTls("controller"), SnapshotMetadata.secretName(N));
  }

  /** The data path's Secrets and what the render of changed block tracking applies. */
  private List<HasMetadata> reconcileWithSidecar(FakeClusterCache cache, Instant now) {
    DataTlsCertificates.Desired d =
        certificates.desired(N, ClusterObserver.dataTlsSecrets(N, cache), now);
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setEnabled(true);
    DesiredState desired =
        DesiredState.of(
            sc,
            VersionsTable.load(),
            ClusterFacts.offline(KubernetesVersion.parse("1.34")),
            d.serving());
    assertThat(Names.of(sc)).isEqualTo(N);
    List<HasMetadata> out = new ArrayList<>(d.secrets());
    out.addAll(desired.snapshotMetadata());
    return out;
  }

  private List<Secret> reconcile(FakeClusterCache cache, Instant now) {
    return certificates.desired(N, ClusterObserver.dataTlsSecrets(N, cache), now).secrets();
  }

  /** What the API server returns for an applied object. */
  private static HasMetadata served(HasMetadata desired) {
    HasMetadata s = Applier.withHashAndOwner(desired, OWNER);
    s.getMetadata().setResourceVersion("7");
    s.getMetadata().setUid("s-" + desired.getMetadata().getName());
    return s;
  }

  private static HasMetadata find(FakeClusterCache cache, HasMetadata s) {
    return cache.objects.stream()
        .filter(o -> o.getKind().equals(s.getKind()))
        .filter(o -> o.getMetadata().getName().equals(s.getMetadata().getName()))
        .findFirst()
        .orElseThrow();
  }
}

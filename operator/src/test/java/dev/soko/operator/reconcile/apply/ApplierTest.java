package dev.soko.operator.reconcile.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

class ApplierTest {
  private static Deployment desired(int replicas) {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName("d")
        .withNamespace("ns")
        .addToLabels("a", "b")
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .endSpec()
        .build();
  }

  /** What the server returns: our fields plus defaults, status and server metadata. */
  private static Deployment served(HasMetadata applied) {
    Deployment d = (Deployment) Serialization.clone(applied);
    d.getMetadata().setUid("u1");
    d.getMetadata().setResourceVersion("42");
    d.getMetadata().getLabels().put("extra", "user");
    d.getSpec().setRevisionHistoryLimit(10);
    return d;
  }

  @Test
  void upToDateIgnoresServerDefaultsAndForeignFields() {
    HasMetadata want = Applier.withHashAndOwner(desired(2), null);
    assertThat(Applier.upToDate(want, served(want))).isTrue();
  }

  @Test
  void handEditOfOurFieldIsDrift() {
    HasMetadata want = Applier.withHashAndOwner(desired(2), null);
    Deployment edited = served(want);
    edited.getSpec().setReplicas(7);
    assertThat(Applier.upToDate(want, edited)).isFalse();
  }

  @Test
  void changedDesiredStateIsNoticedThroughTheHashEvenWhenOnlyAFieldWasRemoved() {
    Deployment withAnnotation = desired(2);
    withAnnotation.getMetadata().getAnnotations().put("x", "y");
    HasMetadata old = Applier.withHashAndOwner(withAnnotation, null);
    HasMetadata now = Applier.withHashAndOwner(desired(2), null);
    assertThat(Applier.upToDate(now, served(old))).isFalse();
  }

  @Test
  void anUpToDateObjectInTheCacheIsNotSentAtAll() {
    var sc =
        new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
            .withNewMetadata()
            .withName("owner")
            .endMetadata()
            .build();
    HasMetadata want = Applier.withHashAndOwner(desired(2), null);
    FakeClusterCache cache = new FakeClusterCache().with(served(want));
    // A null client: any call would throw.
    assertThat(new Applier(null).apply(desired(2), sc, cache)).isFalse();
    assertThat(cache.written).isEmpty();
  }

  @Test
  void listsMustMatchElementWise() {
    assertThat(SubsetMatcher.contained(java.util.List.of("a"), java.util.List.of("a", "b")))
        .isFalse();
    assertThat(SubsetMatcher.contained(java.util.Map.of("k", 1), java.util.Map.of("k", 1L)))
        .isTrue();
  }

  @Test
  void theHashDoesNotDependOnTheOrderOfAMapsEntries() {
    Deployment ab = desired(2);
    Deployment ba = desired(2);
    var first = new java.util.LinkedHashMap<String, String>();
    first.put("a", "1");
    first.put("b", "2");
    var second = new java.util.LinkedHashMap<String, String>();
    second.put("b", "2");
    second.put("a", "1");
    ab.getMetadata().setLabels(first);
    ba.getMetadata().setLabels(second);
    assertThat(Serialization.asJson(ab)).isNotEqualTo(Serialization.asJson(ba));
    assertThat(Applier.hash(ab)).isEqualTo(Applier.hash(ba));
  }
}

package dev.soko.operator.crds;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import org.junit.jupiter.api.Test;

class CrdDecisionTest {
  private static final CrdRelease BUNDLED = CrdRelease.parse("0.3.0").orElseThrow();

  private static CustomResourceDefinition installed(String release) {
    CustomResourceDefinitionBuilder crd =
        new CustomResourceDefinitionBuilder()
            .withNewMetadata()
            .withName("x.soko.dev")
            .endMetadata();
    if (release != null) {
      crd.editMetadata().addToAnnotations(CrdRelease.ANNOTATION, release).endMetadata();
    }
    return crd.build();
  }

  @Test
  void upgradesAnOlderReleaseAndOneWrittenBeforeTheAnnotationExisted() {
    assertThat(CrdDecision.of(installed("0.2.0"), BUNDLED)).isEqualTo(CrdDecision.UPGRADE);
    assertThat(CrdDecision.of(installed("0.3.0-SNAPSHOT"), BUNDLED)).isEqualTo(CrdDecision.UPGRADE);
    assertThat(CrdDecision.of(installed(null), BUNDLED)).isEqualTo(CrdDecision.UPGRADE);
  }

  @Test
  void neverDowngradesNorRewritesTheSameRelease() {
    assertThat(CrdDecision.of(installed("0.3.0"), BUNDLED)).isEqualTo(CrdDecision.CURRENT);
    assertThat(CrdDecision.of(installed("0.3.1"), BUNDLED)).isEqualTo(CrdDecision.NEWER);
    assertThat(CrdDecision.of(installed("1.0.0-rc.1"), BUNDLED)).isEqualTo(CrdDecision.NEWER);
  }

  @Test
  void leavesAloneWhatItCannotReadOrDoesNotFind() {
    assertThat(CrdDecision.of(installed("next"), BUNDLED)).isEqualTo(CrdDecision.UNREADABLE);
    assertThat(CrdDecision.of(installed(""), BUNDLED)).isEqualTo(CrdDecision.UNREADABLE);
    assertThat(CrdDecision.of(null, BUNDLED)).isEqualTo(CrdDecision.MISSING);
  }

  @Test
  void everyBundledCrdCarriesAReleaseTheOperatorCanRead() {
    for (String name : CrdUpgrade.NAMES) {
      CustomResourceDefinition crd = CrdUpgrade.bundled(name);
      assertThat(crd.getMetadata().getName()).isEqualTo(name);
      assertThat(CrdRelease.parse(CrdDecision.releaseOf(crd))).as(name).isPresent();
    }
  }
}

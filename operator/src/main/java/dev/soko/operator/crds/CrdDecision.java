package dev.soko.operator.crds;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import java.util.Optional;

/**
 * What the operator does with one installed CRD, given the one it was built with. It only ever
 * moves a CRD forward: a newer one (a newer operator ran, or an admin applied it) is never
 * replaced, nor one whose release it cannot read.
 */
public enum CrdDecision {
  /** Older than the bundled one, or from a release that wrote no annotation (0.2.0 and before). */
  UPGRADE,
  /** Written by the same release: nothing to write. */
  CURRENT,
  /** Written by a newer release: left alone. */
  NEWER,
  /** Its annotation is not a version: left alone, with a warning naming it. */
  UNREADABLE,
  /** Not installed: Helm installs every CRD of the chart; the operator does not create one. */
  MISSING;

  /** The decision for {@code installed} (null: absent) against the bundled {@code release}. */
  public static CrdDecision of(CustomResourceDefinition installed, CrdRelease bundled) {
    if (installed == null) {
      return MISSING;
    }
    String stamp = releaseOf(installed);
    if (stamp == null) {
      return UPGRADE;
    }
    Optional<CrdRelease> release = CrdRelease.parse(stamp);
    if (release.isEmpty()) {
      return UNREADABLE;
    }
    int order = release.get().compareTo(bundled);
    return order < 0 ? UPGRADE : order == 0 ? CURRENT : NEWER;
  }

  /** The CRD's {@value CrdRelease#ANNOTATION} annotation, or null. */
  static String releaseOf(CustomResourceDefinition crd) {
    var annotations = crd.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(CrdRelease.ANNOTATION);
  }
}

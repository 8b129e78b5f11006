package dev.soko.operator.crds;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings Soko's CRDs in the cluster up to the ones this operator was built with (the crd module's,
 * on its classpath), so that {@code helm upgrade} needs no manual step: Helm installs a chart's
 * {@code crds/} with the first install only and never changes them, and an older schema silently
 * prunes the fields a newer driver writes. Each CRD is server-side applied, only when the installed
 * one is older ({@link CrdDecision}); the apply carries the resourceVersion it compared, so a newer
 * operator's apply in between is never undone.
 */
public final class CrdUpgrade {
  /** Soko's CRDs, the only ones the operator's RBAC lets it change (resourceNames). */
  public static final List<String> NAMES =
      List.of("storageclusters.soko.dev", "storagenodes.soko.dev", "noderequests.soko.dev");

  static final String FIELD_MANAGER = "soko-operator";
  private static final int ATTEMPTS = 3;
  private static final Logger LOG = LoggerFactory.getLogger(CrdUpgrade.class);

  private final KubernetesClient client;

  public CrdUpgrade(KubernetesClient client) {
    this.client = client;
  }

  /** What was found, and done, for one CRD. */
  public record Outcome(String crd, CrdDecision decision, String installed, CrdRelease bundled) {}

  /** Compares and, where older, upgrades every CRD of {@link #NAMES}; fails on an API error. */
  public List<Outcome> run() {
    List<Outcome> outcomes = new ArrayList<>();
    for (String name : NAMES) {
      Outcome outcome = upgrade(bundled(name));
      log(outcome);
      outcomes.add(outcome);
    }
    return outcomes;
  }

  private Outcome upgrade(CustomResourceDefinition bundled) {
    String name = bundled.getMetadata().getName();
    CrdRelease release = bundledRelease(bundled);
    for (int attempt = 1; ; attempt++) {
      CustomResourceDefinition installed =
          client.apiextensions().v1().customResourceDefinitions().withName(name).get();
      CrdDecision decision = CrdDecision.of(installed, release);
      String installedRelease = installed == null ? null : CrdDecision.releaseOf(installed);
      if (decision != CrdDecision.UPGRADE) {
        return new Outcome(name, decision, installedRelease, release);
      }
      bundled.getMetadata().setResourceVersion(installed.getMetadata().getResourceVersion());
      try {
        client.resource(bundled).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
        return new Outcome(name, decision, installedRelease, release);
      } catch (KubernetesClientException e) {
        // 409 on the resourceVersion: someone changed it since it was read; compare again.
        if (e.getCode() != 409 || attempt == ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /** The CRD the build generated for {@code name}, as the chart ships it. */
  static CustomResourceDefinition bundled(String name) {
    String resource = "/META-INF/fabric8/" + name + "-v1.yml";
    try (InputStream in = CrdUpgrade.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing classpath resource " + resource);
      }
      return Serialization.unmarshal(in, CustomResourceDefinition.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static CrdRelease bundledRelease(CustomResourceDefinition bundled) {
    return CrdRelease.parse(CrdDecision.releaseOf(bundled))
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "the bundled CRD "
                        + bundled.getMetadata().getName()
                        + " has no "
                        + CrdRelease.ANNOTATION
                        + " annotation (the crd module's build writes it)"));
  }

  private static void log(Outcome o) {
    switch (o.decision()) {
      case UPGRADE ->
          LOG.info(
              "CRD {} upgraded from release {} to {}",
              o.crd(),
              o.installed() == null ? "unknown (no " + CrdRelease.ANNOTATION + ")" : o.installed(),
              o.bundled());
      case CURRENT -> LOG.debug("CRD {} is current ({})", o.crd(), o.bundled());
      case NEWER ->
          LOG.info(
              "CRD {} is from release {}, newer than this operator's {}: left alone",
              o.crd(),
              o.installed(),
              o.bundled());
      case UNREADABLE ->
          LOG.warn(
              "CRD {} has {}={}, not a release version: left alone",
              o.crd(),
              CrdRelease.ANNOTATION,
              o.installed());
      case MISSING ->
          LOG.warn(
              "CRD {} is not installed: install the chart's crds/ (the operator creates none)",
              o.crd());
    }
  }
}

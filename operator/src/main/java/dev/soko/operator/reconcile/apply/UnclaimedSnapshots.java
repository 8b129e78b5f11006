package dev.soko.operator.reconcile.apply;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import dev.soko.operator.reconcile.kinds.SnapshotContents;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Says so when a pre-provisioned VolumeSnapshotContent of a StorageCluster's driver is not taken by
 * any node. The driver on the node that holds a snapshot labels its content {@value
 * SnapshotContents#MANAGED_BY} with its node within a second (docs/snapshots.md); one still
 * unlabelled {@link #GRACE} after its creation has a snapshot that no running node holds, and no
 * csi-snapshotter will ever serve it: it stays not ready, and deleting it waits on a finalizer only
 * a csi-snapshotter removes. The content gets one Warning Event ({@value #REASON}) per operator run
 * saying that, and why it may be. Reads the registry's cache of unlabelled contents only; the
 * reconcile comes back when the youngest is due.
 */
public final class UnclaimedSnapshots {
  static final String REASON = "SnapshotNotOnAnyNode";

  /** Far beyond the second a running node takes, and within the time a restarting node takes. */
  static final Duration GRACE = Duration.ofMinutes(2);

  /** The driver's snapshot IDs (driver state/Ids): "snap-" and 20 lower-case letters or digits. */
  private static final Pattern SOKO_SNAPSHOT_ID = Pattern.compile("snap-[a-z0-9]{20}");

  /** Records a Warning on a content. */
  @FunctionalInterface
  public interface Warning {
    void record(HasMetadata content, String reason, String message);
  }

  private final Warning warning;

  /** UID of each content already warned of, with its driver; forgotten once it leaves the cache. */
  private final Map<String, String> warned = new ConcurrentHashMap<>();

  public UnclaimedSnapshots(Warning warning) {
    this.warning = warning;
  }

  /**
   * Warns of each unlabelled pre-provisioned content of {@code sc}'s driver older than the grace
   * period, once; returns when the next one is due, or null when none is waiting.
   */
  public Duration check(StorageCluster sc, ClusterCache cache, Instant now) {
    String driver = sc.getSpec().getDriver().getName();
    Set<String> present = new HashSet<>();
    Duration next = null;
    for (HasMetadata content :
        cache.list(KindRegistry.VOLUME_SNAPSHOT_CONTENT, c -> unclaimedImportOf(c, driver))) {
      String uid = content.getMetadata().getUid();
      present.add(uid);
      if (warned.containsKey(uid)) {
        continue;
      }
      Duration left = Duration.between(now, created(content, now).plus(GRACE));
      if (left.isNegative() || left.isZero()) {
        warned.put(uid, driver);
        warning.record(content, REASON, message(sc, handle(content)));
      } else if (next == null || left.compareTo(next) < 0) {
        next = left;
      }
    }
    warned.entrySet().removeIf(e -> e.getValue().equals(driver) && !present.contains(e.getKey()));
    return next;
  }

  private static String handle(HasMetadata content) {
    return content instanceof GenericKubernetesResource g
            && g.get("spec", "source", "snapshotHandle") instanceof String handle
        ? handle
        : "";
  }

  /** A content of the driver made from a snapshot handle, without the managed-by label. */
  static boolean unclaimedImportOf(HasMetadata content, String driver) {
    Map<String, String> labels = content.getMetadata().getLabels();
    return driver.equals(SnapshotContents.driver(content))
        && !handle(content).isEmpty()
        && (labels == null || !labels.containsKey(SnapshotContents.MANAGED_BY))
        && content.getMetadata().getUid() != null;
  }

  private static Instant created(HasMetadata content, Instant now) {
    String at = content.getMetadata().getCreationTimestamp();
    try {
      return at == null ? now : Instant.parse(at);
    } catch (DateTimeParseException e) {
      return now;
    }
  }

  static String message(StorageCluster sc, String handle) {
    String cluster = sc.getMetadata().getName();
    if (!SOKO_SNAPSHOT_ID.matcher(handle).matches()) {
      return "snapshot handle "
          + handle
          + " is not a snapshot ID of "
          + sc.getSpec().getDriver().getName()
          + " (snap- and 20 lower-case letters or digits): no node of StorageCluster "
          + cluster
          + " can serve this content, so it never becomes ready; see docs/snapshots.md";
    }
    return "no node of StorageCluster "
        + cluster
        + " holds snapshot "
        + handle
        + ": none labelled this content "
        + SnapshotContents.MANAGED_BY
        + " within "
        + GRACE.toMinutes()
        + " min, so no csi-snapshotter serves it and it never becomes ready. The node that"
        + " holds it may be down (its driver labels the content when it starts) or gone, or the"
        + " snapshot was deleted; see docs/snapshots.md";
  }
}

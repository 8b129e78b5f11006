package dev.soko.driver.iolimit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IO limits of the volumes published to pods on this node: for each publication (a target path)
 * the pod, the volume's device and its limits. A publication's limits are applied when it is made,
 * when the volume's limits change, and again every {@code period}, because a pod's containers get
 * their cgroups after NodePublishVolume (on cgroup v1 each needs the limit of its own) and a pod's
 * cgroup may not exist yet when the volume is published. A failure is logged once per publication
 * and retried at the next period: a limit never fails a mount.
 *
 * <p>Only publications with limits are looked at (a volume whose limits are lifted is written once,
 * when they change), and a pod's cgroup is searched for once and then kept while it is there: a
 * node with a hundred unlimited volumes published walked its whole cgroup tree a hundred times
 * every period, and its CSI calls queued behind the CPU that took.
 */
public final class PodThrottles implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PodThrottles.class);
  public static final Duration PERIOD = Duration.ofSeconds(2);

  /** One volume published to one pod. */
  record Publication(String volumeId, String podUid, String device, IoLimits limits) {}

  private final CgroupThrottle throttle;
  private final Map<Path, Publication> byTarget = new ConcurrentHashMap<>();
  private final Map<Path, Boolean> warned = new ConcurrentHashMap<>();

  /** Each pod's cgroup found so far, by pod UID; dropped with the pod's last publication. */
  private final Map<String, Path> podCgroups = new ConcurrentHashMap<>();

  private final ScheduledExecutorService timer;

  public PodThrottles(CgroupThrottle throttle, Duration period) {
    this.throttle = throttle;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "io-limits");
              t.setDaemon(true);
              return t;
            });
    timer.scheduleWithFixedDelay(
        this::applyAll, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** A volume on {@code device} was published at {@code target} to the pod {@code podUid}. */
  public void published(
      Path target, String volumeId, String podUid, String device, IoLimits limits) {
    Publication publication = new Publication(volumeId, podUid, device, limits);
    byTarget.put(target, publication);
    if (!limits.none()) {
      apply(target, publication);
    }
  }

  public void unpublished(Path target) {
    Publication gone = byTarget.remove(target);
    warned.remove(target);
    if (gone != null
        && byTarget.values().stream().noneMatch(p -> p.podUid().equals(gone.podUid()))) {
      podCgroups.remove(gone.podUid());
    }
  }

  /** The volume's limits changed: every pod it is published to gets them now. */
  public void changed(String volumeId, IoLimits limits) {
    byTarget.replaceAll(
        (target, p) ->
            p.volumeId().equals(volumeId)
                ? new Publication(p.volumeId(), p.podUid(), p.device(), limits)
                : p);
    byTarget.forEach(
        (target, p) -> {
          if (p.volumeId().equals(volumeId)) {
            apply(target, p);
          }
        });
  }

  /**
   * A container of the pod {@code podUid} was created and is about to run (the runtime's NRI
   * StartContainer, {@code dev.soko.driver.nri.NriPlugin}): the pod's limited volumes are written
   * now, into its new cgroup too, so they hold from the container's first I/O rather than from the
   * next periodic pass.
   */
  public void containerStarting(String podUid) {
    byTarget.forEach(
        (target, p) -> {
          if (p.podUid().equals(podUid) && !p.limits().none()) {
            apply(target, p);
          }
        });
  }

  /** The limits in force for a publication (for tests and the volume's condition). */
  Optional<IoLimits> limitsAt(Path target) {
    return Optional.ofNullable(byTarget.get(target)).map(Publication::limits);
  }

  /** The periodic pass: every publication with limits, for the containers started since. */
  void applyAll() {
    byTarget.forEach(
        (target, p) -> {
          if (!p.limits().none()) {
            apply(target, p);
          }
        });
  }

  private void apply(Path target, Publication p) {
    try {
      Optional<Path> pod = podCgroup(p.podUid());
      if (pod.isEmpty()) {
        warnOnce(target, p, "the pod's cgroup is not there yet");
        return;
      }
      throttle.apply(pod.get(), p.device(), p.limits());
      if (warned.remove(target) != null) {
        LOG.info("IO limits of volume {} hold for pod {} again", p.volumeId(), p.podUid());
      }
    } catch (IOException | RuntimeException e) {
      warnOnce(target, p, e.toString());
    }
  }

  /** The pod's cgroup as found before while it is still there, else searched for again. */
  private Optional<Path> podCgroup(String podUid) throws IOException {
    Path known = podCgroups.get(podUid);
    if (known != null && Files.isDirectory(known)) {
      return Optional.of(known);
    }
    Optional<Path> found = PodCgroups.find(throttle.root(), podUid);
    found.ifPresentOrElse(dir -> podCgroups.put(podUid, dir), () -> podCgroups.remove(podUid));
    return found;
  }

  private void warnOnce(Path target, Publication p, String why) {
    if (warned.put(target, Boolean.TRUE) == null) {
      LOG.warn(
          "cannot apply the IO limits of volume {} to pod {} yet (retried every {} s): {}",
          p.volumeId(),
          p.podUid(),
          PERIOD.toSeconds(),
          why);
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}

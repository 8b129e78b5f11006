package dev.soko.driver.report;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands snapshot contents that no node has taken to this node's csi-snapshotter. With {@code
 * --node-deployment}, csi-snapshotter lists only the contents labelled {@value
 * SnapshotContent#MANAGED_BY}={@code <its node>}; a content without that label is served by no
 * node. This class watches the unlabelled contents of one kind (VolumeSnapshotContents, {@link
 * ImportedSnapshots}; VolumeGroupSnapshotContents, {@link GroupSnapshotContents}) of this driver
 * and labels those this node can serve with this node's name. A subclass says which ID a content
 * needs its node to hold ({@link #heldId}) and whether this node holds it ({@link #holds}): the
 * node's catalog is the one authority on where a volume or snapshot is, and IDs do not name their
 * node.
 *
 * <p>A {@link Reflector} lists and watches (renewed after 5 to 10 minutes, listed again when the
 * version is too old); its worker keeps the unlabelled contents seen, labels those this node holds
 * and looks at them again every {@code recheck} (a pool mounted late brings its volumes and
 * snapshots into the catalog without any API event; this costs no request until a content turns out
 * to be ours). The watch selects only contents without the label, so it stays small in a large
 * cluster; other drivers' contents are skipped on arrival (the API server serves no field selector
 * on a custom resource's {@code spec.driver}). A label is only ever added, at the version read, so
 * a labelled content is never changed.
 *
 * <p>An API the cluster may lack ({@link Kind#optional}: the group snapshot CRDs are installed
 * apart from the snapshot ones) is looked for again every {@link Timing#lookAgain} while its list
 * answers 404 (not installed) or 403 (this node may not list it), with one line in the log, rather
 * than every few seconds with a warning: a CRD installed or a rule granted later is picked up.
 */
public abstract sealed class ContentLabeller implements AutoCloseable, Reflector.Source
    permits ImportedSnapshots, GroupSnapshotContents, GroupSnapshotClasses {
  static final String UNLABELLED = "labelSelector=" + encode("!" + SnapshotContent.MANAGED_BY);
  static final String MERGE_PATCH = "application/merge-patch+json";
  static final int PAGE = 500;
  static final int MAX_PAGE_CHARS = 8 << 20;

  /**
   * One kind of content.
   *
   * @param path the collection, e.g. {@code
   *     /apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents}
   * @param resource its kind, for the log, e.g. {@code VolumeSnapshotContent}
   * @param one one content as the log line of its labelling names it, e.g. {@code a pre-provisioned
   *     VolumeSnapshotContent}
   * @param purpose what is done, for the start's log line
   * @param threadName the reflector's worker thread
   * @param optional whether a cluster may lack the API (see the class comment)
   */
  record Kind(
      String path,
      String resource,
      String one,
      String purpose,
      String threadName,
      boolean optional) {}

  /**
   * @param minWatch the shortest watch asked of the API server
   * @param recheck how often the unlabelled contents seen are held against the catalog again
   * @param lookAgain how often an optional API the cluster does not serve is looked for
   */
  record Timing(Duration minWatch, Duration recheck, Duration lookAgain) {
    static final Timing DEFAULT =
        new Timing(Duration.ofMinutes(5), Duration.ofSeconds(30), Duration.ofMinutes(5));
  }

  private final Logger log = LoggerFactory.getLogger(getClass());
  private final KubeApi api;
  private final Kind kind;
  private final String driver;
  private final String node;
  private final Timing timing;
  private final Reflector reflector;

  /** Unlabelled contents of this driver that a node may claim, by name; on the worker only. */
  private final Map<String, SnapshotContent> unclaimed = new HashMap<>();

  /** Whether the last list found the optional API missing; on the reader only. */
  private boolean unserved;

  /**
   * @param driver this driver's name: only contents whose {@code spec.driver} it is are looked at
   * @param node this node's name, the label's value (csi-snapshotter's NODE_NAME)
   */
  ContentLabeller(KubeApi api, Kind kind, String driver, String node, Timing timing) {
    this.api = api;
    this.kind = kind;
    this.driver = driver;
    this.node = node;
    this.timing = timing;
    this.reflector = new Reflector(api, kind.threadName(), "watching", timing.minWatch());
    reflector.source(this);
  }

  /**
   * The ID whose holder serves the content (a list item or watch event object), of the shape this
   * driver gives it; empty when it names none, and no node is to claim it.
   */
  abstract String heldId(Object content);

  /** The CSI driver an object names: a content's {@code spec.driver}. */
  String driverOf(Object object) {
    return text(JsonParser.at(object, "spec", "driver"));
  }

  /** Whether this node's catalog holds {@code heldId}; on the worker. */
  abstract boolean holds(String heldId);

  /** Lists, watches and labels on daemon threads until {@link #close}. */
  public void start() {
    log.atInfo().addKeyValue("driver", driver).addKeyValue("node", node).log(kind.purpose());
    reflector.start();
    reflector.every(timing.recheck(), this::recheckAll);
  }

  /** Waits until the worker has done what it was handed so far (for tests). */
  void settle() throws InterruptedException {
    reflector.settle();
  }

  /**
   * Every unlabelled content, page by page; the list's version when all were read and handed on.
   */
  @Override
  public Optional<String> read() throws InterruptedException {
    List<SnapshotContent> seen = new ArrayList<>();
    String next = "";
    String version;
    do {
      Optional<Object> page = page(next);
      if (page.isEmpty()) {
        return Optional.empty();
      }
      if (JsonParser.at(page.get(), "items") instanceof List<?> items) {
        for (Object item : items) {
          SnapshotContent content = SnapshotContent.of(item, this::driverOf, this::heldId);
          if (content != null) {
            seen.add(content);
          }
        }
      }
      version = text(JsonParser.at(page.get(), "metadata", "resourceVersion"));
      next = text(JsonParser.at(page.get(), "metadata", "continue"));
    } while (!next.isEmpty());
    if (version.isEmpty()) {
      reflector.failed("listing body", "the list has no resourceVersion");
      return Optional.empty();
    }
    reflector.succeeded("listing");
    reflector.apply(() -> replace(seen));
    return Optional.of(version);
  }

  /** One page of the list, parsed; empty when it could not be read (said why). */
  private Optional<Object> page(String next) throws InterruptedException {
    String path =
        kind.path()
            + "?"
            + UNLABELLED
            + "&limit="
            + PAGE
            + (next.isEmpty() ? "" : "&continue=" + encode(next));
    KubeApi.Response response;
    try {
      response = api.get(path, MAX_PAGE_CHARS);
    } catch (IOException e) {
      reflector.failed("listing " + e.getClass().getSimpleName(), e.toString());
      return Optional.empty();
    }
    if (kind.optional() && (response.status() == 404 || response.status() == 403)) {
      unserved(response.status());
      return Optional.empty();
    }
    if (!response.ok()) {
      reflector.failed("listing HTTP " + response.status(), cut(response.body()));
      return Optional.empty();
    }
    if (unserved) {
      unserved = false;
      log.info("{}s are served now: labelling them", kind.resource());
    }
    try {
      return Optional.of(JsonParser.parse(response.body()));
    } catch (IllegalArgumentException e) {
      reflector.failed("listing body", e.getMessage());
      return Optional.empty();
    }
  }

  /** Says once why an optional API cannot be listed, and looks again after a long wait. */
  private void unserved(int status) {
    if (!unserved) {
      unserved = true;
      log.info(
          status == 404
              ? "the cluster serves no {}s (their CRD is not installed): none is labelled; looking"
                  + " again every {}"
              : "this node may not list {}s (HTTP 403: its ServiceAccount has no rule for them):"
                  + " none is labelled; looking again every {}",
          kind.resource(),
          timing.lookAgain());
    }
    reflector.waitBeforeNextRead(timing.lookAgain());
  }

  @Override
  public String watchPath() {
    return kind.path() + "?" + UNLABELLED;
  }

  @Override
  public void event(String type, Object object) {
    SnapshotContent content = SnapshotContent.of(object, this::driverOf, this::heldId);
    if (content == null) {
      return; // a bookmark, or nothing to act on
    }
    if ("ADDED".equals(type) || "MODIFIED".equals(type)) {
      reflector.apply(() -> observe(content));
    } else if ("DELETED".equals(type)) {
      // Deleted, or labelled (it left the selector): nothing more to do for it here.
      reflector.apply(() -> unclaimed.remove(content.name()));
    }
  }

  private void replace(List<SnapshotContent> seen) {
    unclaimed.clear();
    seen.forEach(this::observe);
  }

  /** On the worker: keeps an unlabelled content of this driver and labels it if it is ours. */
  private void observe(SnapshotContent content) {
    if (!content.unclaimedOf(driver)) {
      unclaimed.remove(content.name()); // labelled since, another driver's, or names no Soko ID
      return;
    }
    unclaimed.put(content.name(), content);
    claim(content);
  }

  private void recheckAll() {
    List.copyOf(unclaimed.values()).forEach(this::claim);
  }

  /** On the worker: labels the content with this node when its catalog holds the held ID. */
  private void claim(SnapshotContent content) {
    boolean ours;
    try {
      ours = holds(content.heldId());
    } catch (RuntimeException e) {
      reflector.failed("reading the catalog", e.toString());
      return;
    }
    if (!ours) {
      return;
    }
    KubeApi.Response response;
    try {
      response =
          api.send(
              "PATCH",
              kind.path() + "/" + encode(content.name()) + "?fieldManager=soko-driver",
              MERGE_PATCH,
              content.labelPatch(node));
    } catch (IOException e) {
      reflector.failed("labelling " + e.getClass().getSimpleName(), e.toString());
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (response.ok() || response.status() == 404) {
      unclaimed.remove(content.name());
      reflector.succeeded("labelling");
      if (response.ok()) {
        log.atInfo()
            .addKeyValue("content", content.name())
            .addKeyValue("held", content.heldId())
            .addKeyValue("node", node)
            .log("labelled {} for the csi-snapshotter of {}", kind.one(), node);
      }
    } else if (response.status() == 409) {
      // Changed since it was read: the watch brings the new version (or, if that change was a
      // label, its leaving the selector), which is looked at then; this version is done with.
      unclaimed.remove(content.name());
      log.debug("{} {} changed before it was labelled", kind.resource(), content.name());
    } else {
      reflector.failed("labelling HTTP " + response.status(), cut(response.body()));
    }
  }

  @Override
  public void close() {
    reflector.close();
  }
}

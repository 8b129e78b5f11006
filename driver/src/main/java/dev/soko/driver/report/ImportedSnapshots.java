package dev.soko.driver.report;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import dev.soko.driver.state.Ids;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands pre-provisioned VolumeSnapshotContents to this node's csi-snapshotter. With {@code
 * --node-deployment}, csi-snapshotter lists only the contents labelled {@value
 * SnapshotContent#MANAGED_BY}={@code <its node>}, and the snapshot-controller sets that label only
 * on the contents it creates for dynamic snapshots. A content a user creates from an existing
 * snapshot handle (a re-install, a backup tool restoring its catalog, a pre-provisioned snapshot)
 * has none, so no node would serve it: it would never become ready, and deleting it would hang.
 * Snapshot IDs do not name their node, but each node's catalog knows the snapshots it holds: this
 * class watches the unlabelled contents of this driver and labels those whose snapshot this node
 * holds with this node's name.
 *
 * <p>Why the node and not the operator: the catalog is the one authority on where a snapshot is.
 * The operator could only learn it if every StorageNode report listed every snapshot ID (reports
 * that grow with the snapshots, rewritten every minute by every node), and would then label from a
 * report up to a minute old. The cost here is small: the watch selects only contents without the
 * label, which are the imported ones until a node labels them (a dynamic content carries the label
 * from its creation), so at 1,000 nodes an import costs 1,000 small watch events and one PATCH, and
 * a start costs one LIST that finds (nearly) nothing. Other drivers' contents are skipped on
 * arrival: the API server serves no field selector on a custom resource's {@code spec.driver}.
 *
 * <p>A {@link Reflector} lists and watches (renewed after 5 to 10 minutes, listed again when the
 * version is too old); its worker keeps the unlabelled contents seen, labels those this node holds
 * and looks at them again every {@code recheck} (a pool mounted late brings its snapshots into the
 * catalog without any API event; this costs no request until a content turns out to be ours). A
 * content whose snapshot no node holds stays unlabelled (docs/snapshots.md). A label is only ever
 * added, at the version read, so a labelled content is never changed.
 */
public final class ImportedSnapshots implements AutoCloseable, Reflector.Source {
  private static final Logger LOG = LoggerFactory.getLogger(ImportedSnapshots.class);
  static final String CONTENTS = "/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents";
  static final String UNLABELLED = "labelSelector=" + encode("!" + SnapshotContent.MANAGED_BY);
  static final String MERGE_PATCH = "application/merge-patch+json";
  static final int PAGE = 500;
  static final int MAX_PAGE_CHARS = 8 << 20;
  static final Duration MIN_WATCH = Duration.ofMinutes(5);

  /** How often the unlabelled contents seen are held against the catalog again. */
  public static final Duration RECHECK = Duration.ofSeconds(30);

  private final KubeApi api;
  private final String driver;
  private final String node;
  private final Predicate<String> holds;
  private final Duration recheck;
  private final Reflector reflector;

  /** Unlabelled pre-provisioned contents of this driver, by name; touched on the worker only. */
  private final Map<String, SnapshotContent> unclaimed = new HashMap<>();

  /**
   * @param driver this driver's name: only contents whose {@code spec.driver} it is are looked at
   * @param node this node's name, the label's value (csi-snapshotter's NODE_NAME)
   * @param holds whether this node's catalog holds a snapshot ID
   */
  public ImportedSnapshots(KubeApi api, String driver, String node, Predicate<String> holds) {
    this(api, driver, node, holds, MIN_WATCH, RECHECK);
  }

  ImportedSnapshots(
      KubeApi api,
      String driver,
      String node,
      Predicate<String> holds,
      Duration minWatch,
      Duration recheck) {
    this.api = api;
    this.driver = driver;
    this.node = node;
    this.holds = holds;
    this.recheck = recheck;
    this.reflector = new Reflector(api, "snapshot-import", "watching", minWatch);
    reflector.source(this);
  }

  /** Lists, watches and labels on daemon threads until {@link #close}. */
  public void start() {
    LOG.atInfo()
        .addKeyValue("driver", driver)
        .addKeyValue("node", node)
        .log("labelling the pre-provisioned VolumeSnapshotContents whose snapshot this node holds");
    reflector.start();
    reflector.every(recheck, this::recheckAll);
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
      String path =
          CONTENTS
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
      if (!response.ok()) {
        reflector.failed("listing HTTP " + response.status(), cut(response.body()));
        return Optional.empty();
      }
      Object page;
      try {
        page = JsonParser.parse(response.body());
      } catch (IllegalArgumentException e) {
        reflector.failed("listing body", e.getMessage());
        return Optional.empty();
      }
      if (JsonParser.at(page, "items") instanceof List<?> items) {
        for (Object item : items) {
          SnapshotContent content = SnapshotContent.of(item);
          if (content != null) {
            seen.add(content);
          }
        }
      }
      version = text(JsonParser.at(page, "metadata", "resourceVersion"));
      next = text(JsonParser.at(page, "metadata", "continue"));
    } while (!next.isEmpty());
    if (version.isEmpty()) {
      reflector.failed("listing body", "the list has no resourceVersion");
      return Optional.empty();
    }
    reflector.succeeded("listing");
    reflector.apply(() -> replace(seen));
    return Optional.of(version);
  }

  @Override
  public String watchPath() {
    return CONTENTS + "?" + UNLABELLED;
  }

  @Override
  public void event(String type, Object object) {
    SnapshotContent content = SnapshotContent.of(object);
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

  /** On the worker: keeps an unlabelled import of this driver and labels it if it is ours. */
  private void observe(SnapshotContent content) {
    if (!content.unclaimedImportOf(driver) || !Ids.isSnapshotId(content.snapshotHandle())) {
      unclaimed.remove(content.name()); // labelled since, another driver's, or not a Soko ID
      return;
    }
    unclaimed.put(content.name(), content);
    claim(content);
  }

  private void recheckAll() {
    List.copyOf(unclaimed.values()).forEach(this::claim);
  }

  /** On the worker: labels the content with this node when its catalog holds the snapshot. */
  private void claim(SnapshotContent content) {
    boolean ours;
    try {
      ours = holds.test(content.snapshotHandle());
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
              CONTENTS + "/" + encode(content.name()) + "?fieldManager=soko-driver",
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
        LOG.atInfo()
            .addKeyValue("content", content.name())
            .addKeyValue("snapshot", content.snapshotHandle())
            .addKeyValue("node", node)
            .log(
                "labelled a pre-provisioned VolumeSnapshotContent for this node's csi-snapshotter");
      }
    } else if (response.status() == 409) {
      // Changed since it was read: the watch brings the new version (or, if that change was a
      // label, its leaving the selector), which is looked at then; this version is done with.
      unclaimed.remove(content.name());
      LOG.debug("VolumeSnapshotContent {} changed before it was labelled", content.name());
    } else {
      reflector.failed("labelling HTTP " + response.status(), cut(response.body()));
    }
  }

  @Override
  public void close() {
    reflector.close();
  }
}

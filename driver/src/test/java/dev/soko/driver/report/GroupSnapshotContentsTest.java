package dev.soko.driver.report;

import static dev.soko.driver.report.ImportedSnapshotsTest.DRIVER;
import static dev.soko.driver.report.ImportedSnapshotsTest.event;
import static dev.soko.driver.report.ImportedSnapshotsTest.kind;
import static dev.soko.driver.report.ImportedSnapshotsTest.list;
import static dev.soko.driver.report.ImportedSnapshotsTest.watch;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.Reflector;
import dev.soko.driver.report.ApiServerFake.Answer;
import dev.soko.driver.report.ApiServerFake.Request;
import dev.soko.driver.report.ContentLabeller.Timing;
import dev.soko.driver.report.ImportedSnapshotsTest.Script;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Which VolumeGroupSnapshotContents the controller labels for its group csi-snapshotter, against a
 * fake API server: every dynamic and pre-provisioned one of this driver, whatever node holds its
 * volumes, never another driver's or a labelled one; a cluster without the group snapshot API is
 * looked at again slowly and quietly.
 */
class GroupSnapshotContentsTest {
  static final String SNAPSHOTTER = "soko_groups";
  static final String OUR_VOLUME = id("vol-", "ours");
  static final String THEIR_VOLUME = id("vol-", "theirs");
  static final String OUR_GROUP = id("group-", "ours");

  /** Long against the reflector's first backoff (at most 1 s), short for a test. */
  static final Duration LOOK_AGAIN = Duration.ofMillis(1500);

  @TempDir Path dir;
  final ApiServerFake api = new ApiServerFake();
  final Script script = new Script();
  final List<Instant> listed = new CopyOnWriteArrayList<>();
  final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  final List<Logger> loggers =
      List.of(
          (Logger) LoggerFactory.getLogger(GroupSnapshotContents.class),
          (Logger) LoggerFactory.getLogger(Reflector.class));
  GroupSnapshotContents groups;

  GroupSnapshotContentsTest() throws Exception {
    api.answers =
        request -> {
          if (kind(request).equals("list")) {
            listed.add(Instant.now());
          }
          return script.apply(request);
        };
  }

  @AfterEach
  void stop() {
    if (groups != null) {
      groups.close();
    }
    loggers.forEach(l -> l.detachAppender(logged));
    api.close();
  }

  void start() throws Exception {
    logged.start();
    loggers.forEach(l -> l.addAppender(logged));
    groups =
        new GroupSnapshotContents(
            api.client(dir, "t"),
            DRIVER,
            SNAPSHOTTER,
            new Timing(Duration.ofMinutes(5), Duration.ofMillis(100), LOOK_AGAIN));
    groups.start();
  }

  @Test
  void aDynamicContentIsLabelledWithTheGroupSnapshottersIdentityAtTheVersionRead()
      throws Exception {
    script.then(
        "list", list("100", "", content("first-ours", "7", DRIVER, dynamic(OUR_VOLUME), null)));
    start();

    Request patch = nth("patch", 1);

    assertThat(patch.uri())
        .isEqualTo(GroupSnapshotContents.CONTENTS + "/first-ours?fieldManager=soko-driver");
    assertThat(patch.contentType()).isEqualTo("application/merge-patch+json");
    Object body = JsonParser.parse(patch.body());
    assertThat(JsonParser.at(body, "metadata", "resourceVersion")).isEqualTo("7");
    assertThat(JsonParser.at(body, "metadata", "labels"))
        .isEqualTo(Map.of("snapshot.storage.kubernetes.io/managed-by", SNAPSHOTTER));
    Request list = nth("list", 1);
    assertThat(list.uri())
        .startsWith(GroupSnapshotContents.CONTENTS + "?")
        .contains("labelSelector=%21snapshot.storage.kubernetes.io%2Fmanaged-by");
  }

  @Test
  void everyDynamicAndPreProvisionedContentOfThisDriverIsLabelledWhateverItsVolumesAre()
      throws Exception {
    // One from the list, the others from the watch: both paths label.
    script
        .then(
            "list", list("100", "", content("first-ours", "7", DRIVER, dynamic(OUR_VOLUME), null)))
        .then(
            "watch",
            watch(
                event(
                    "ADDED",
                    content(
                        "first-theirs", "101", DRIVER, dynamic(THEIR_VOLUME, OUR_VOLUME), null)),
                event("ADDED", content("imported", "102", DRIVER, preProvisioned(OUR_GROUP), null)),
                event(
                    "ADDED",
                    content("not-a-soko-id", "103", DRIVER, preProvisioned("backup-1234"), null))));
    start();

    nth("patch", 4);

    assertThat(patchesAfterRechecks())
        .as("the controller hands each call to the volumes' node: no node needs to hold them")
        .containsExactlyInAnyOrder("first-ours", "first-theirs", "imported", "not-a-soko-id");
  }

  @Test
  void anotherDriversContentAndALabelledContentAreNeverTouched() throws Exception {
    script.then(
        "list",
        list(
            "100",
            "",
            content("other-driver", "7", "other.csi.example", dynamic(OUR_VOLUME), null),
            content(
                "other-driver-group", "8", "other.csi.example", preProvisioned(OUR_GROUP), null),
            content("labelled", "9", DRIVER, dynamic(OUR_VOLUME), "node-2"),
            content("labelled-empty", "10", DRIVER, preProvisioned(OUR_GROUP), ""),
            content("no-source", "11", DRIVER, Map.of(), null)));
    start();

    nth("watch", 1);

    assertThat(patchesAfterRechecks()).isEmpty();
  }

  @Test
  void aContentChangedBeforeItWasLabelledIsDroppedNotForcedOnARecheck() throws Exception {
    script
        .then(
            "list", list("100", "", content("first-ours", "7", DRIVER, dynamic(OUR_VOLUME), null)))
        .then("patch", new Answer(409, "{\"kind\":\"Status\",\"code\":409}"));
    start();

    nth("patch", 1);

    assertThat(patchesAfterRechecks())
        .as("the watch brings the new version; the one refused is not patched again")
        .containsExactly("first-ours");
  }

  @Test
  void aClusterWithoutTheGroupSnapshotApiIsLookedAtAgainSlowlyAndQuietlyUntilItServesIt()
      throws Exception {
    Answer notFound = new Answer(404, "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
    script
        .then("list", notFound)
        .then("list", notFound)
        .then(
            "list", list("100", "", content("first-ours", "7", DRIVER, dynamic(OUR_VOLUME), null)));
    start();

    nth("patch", 1);

    assertThat(listed).hasSize(3);
    assertThat(Duration.between(listed.get(0), listed.get(1)))
        .as("looked at again after %s, not after the reflector's backoff", LOOK_AGAIN)
        .isGreaterThanOrEqualTo(LOOK_AGAIN.minusMillis(100));
    assertThat(logged.list).noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN));
    assertThat(logged.list)
        .filteredOn(e -> e.getFormattedMessage().contains("serves no VolumeGroupSnapshotContents"))
        .as("said once, not at every look")
        .hasSize(1);
    assertThat(logged.list)
        .anyMatch(e -> e.getFormattedMessage().contains("VolumeGroupSnapshotContents are served"));
  }

  @Test
  void aNodeThatMayNotListGroupContentsSaysWhyOnceAndLooksAgainSlowly() throws Exception {
    script
        .then(
            "list", new Answer(403, "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\"}"))
        .then(
            "list", list("100", "", content("first-ours", "7", DRIVER, dynamic(OUR_VOLUME), null)));
    start();

    nth("patch", 1);

    assertThat(logged.list).noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN));
    assertThat(logged.list)
        .anyMatch(
            e -> e.getFormattedMessage().contains("may not list VolumeGroupSnapshotContents"));
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** A Soko ID: {@code prefix} and 20 characters, {@code word} over and over. */
  static String id(String prefix, String word) {
    return prefix + word.repeat(20).substring(0, 20);
  }

  Request nth(String kind, int n) throws InterruptedException {
    return ImportedSnapshotsTest.nth(api, kind, n);
  }

  /** The contents patched once the worker has done its work and rechecked three times. */
  List<String> patchesAfterRechecks() throws InterruptedException {
    groups.settle();
    Thread.sleep(300);
    groups.settle();
    return ImportedSnapshotsTest.patches(api, GroupSnapshotContents.CONTENTS);
  }

  /** A dynamic content's source: the volumes the snapshot-controller names, in its order. */
  static Map<String, Object> dynamic(String... volumeHandles) {
    return Map.of("volumeHandles", List.of(volumeHandles));
  }

  /** A pre-provisioned content's source: the group snapshot and its members' snapshots. */
  static Map<String, Object> preProvisioned(String groupHandle) {
    return Map.of(
        "groupSnapshotHandles",
        Map.of(
            "volumeGroupSnapshotHandle",
            groupHandle,
            "volumeSnapshotHandles",
            List.of("snap-membermembermember01", "snap-membermembermember02")));
  }

  /** A VolumeGroupSnapshotContent; a null label leaves it out. */
  static Map<String, Object> content(
      String name,
      String resourceVersion,
      String driver,
      Map<String, Object> source,
      String managedBy) {
    return ImportedSnapshotsTest.content(
        "groupsnapshot.storage.k8s.io/v1",
        "VolumeGroupSnapshotContent",
        name,
        resourceVersion,
        driver,
        source,
        managedBy);
  }
}

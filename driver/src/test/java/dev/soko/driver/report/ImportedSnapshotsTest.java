package dev.soko.driver.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.report.ApiServerFake.Answer;
import dev.soko.driver.report.ApiServerFake.Request;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImportedSnapshotsTest {
  static final String DRIVER = "csi.soko.dev";
  static final String NODE = "node-1";
  static final String HELD = "snap-heldheldheldheldheld";
  static final String HELD_TOO = "snap-alsoheldalsoheldalso";
  static final String ELSEWHERE = "snap-elsewhereelsewherexx";
  static final String LATE = "snap-latelatelatelatelate";

  @TempDir Path dir;
  ApiServerFake api;
  Script script;
  final Set<String> held = ConcurrentHashMap.newKeySet();
  final Set<String> asked = ConcurrentHashMap.newKeySet();
  ImportedSnapshots imports;

  @BeforeEach
  void startFake() throws Exception {
    api = new ApiServerFake();
    script = new Script();
    api.answers = script;
    held.addAll(List.of(HELD, HELD_TOO));
  }

  @AfterEach
  void stop() {
    if (imports != null) {
      imports.close();
    }
    api.close();
  }

  void start() throws Exception {
    imports =
        new ImportedSnapshots(
            api.client(dir, "t"),
            DRIVER,
            NODE,
            id -> {
              asked.add(id);
              return held.contains(id);
            },
            Duration.ofMinutes(5),
            Duration.ofMillis(100));
    imports.start();
  }

  @Test
  void anUnlabelledImportWhoseSnapshotThisNodeHoldsIsLabelledWithThisNodeAndNothingElseIsTouched()
      throws Exception {
    script.then(
        "list",
        list(
            "100",
            "",
            content("import-held", "7", DRIVER, HELD, null),
            content("import-elsewhere", "8", DRIVER, ELSEWHERE, null),
            content("import-foreign-id", "9", DRIVER, "pvc-1/some-other-id", null),
            content("other-driver", "10", "other.csi.example", HELD_TOO, null),
            content("dynamic", "11", DRIVER, null, null),
            content("labelled", "12", DRIVER, HELD_TOO, "node-2"),
            content("labelled-empty", "13", DRIVER, HELD_TOO, "")));
    start();

    Request list = nth("list", 1);
    assertThat(list.uri())
        .startsWith(ImportedSnapshots.CONTENTS + "?")
        .contains("labelSelector=%21snapshot.storage.kubernetes.io%2Fmanaged-by")
        .contains("limit=500")
        .doesNotContain("resourceVersion=");
    Request patch = nth("patch", 1);
    assertThat(patch.uri())
        .isEqualTo(ImportedSnapshots.CONTENTS + "/import-held?fieldManager=soko-driver");
    assertThat(patch.contentType()).isEqualTo("application/merge-patch+json");
    Object body = JsonParser.parse(patch.body());
    assertThat(JsonParser.at(body, "metadata", "resourceVersion"))
        .as("the version read, so that a change since is refused, not overwritten")
        .isEqualTo("7");
    assertThat(JsonParser.at(body, "metadata", "labels"))
        .isEqualTo(Map.of("snapshot.storage.kubernetes.io/managed-by", NODE));
    nth("watch", 1);
    imports.settle();
    Thread.sleep(300); // three rechecks
    imports.settle();

    assertThat(patches()).containsExactly("import-held");
    assertThat(asked)
        .as("only this driver's unlabelled imports with a Soko snapshot ID are looked up")
        .containsExactlyInAnyOrder(HELD, ELSEWHERE);
  }

  @Test
  void aSnapshotThatReachesTheCatalogLaterIsLabelledOnARecheckWithoutAnyApiEvent()
      throws Exception {
    script.then("list", list("100", "", content("import-late", "7", DRIVER, LATE, null)));
    start();
    nth("watch", 1);
    imports.settle();
    assertThat(patches()).isEmpty();

    held.add(LATE); // its pool was mounted after the start, say
    Request patch = nth("patch", 1);

    assertThat(patch.uri()).startsWith(ImportedSnapshots.CONTENTS + "/import-late?");
    assertThat(api.seen.stream().filter(r -> kind(r).equals("list"))).hasSize(1);
  }

  @Test
  void contentsArrivingOnTheWatchAreJudgedAsTheyComeAndABookmarkMovesTheVersion() throws Exception {
    script
        .then("list", list("100", ""))
        .then(
            "watch",
            watch(
                event("ADDED", content("other-driver", "101", "other.csi.example", HELD, null)),
                event("MODIFIED", content("labelled", "102", DRIVER, HELD, "node-2")),
                event("ADDED", content("import-held", "103", DRIVER, HELD, null)),
                "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"VolumeSnapshotContent\","
                    + "\"metadata\":{\"resourceVersion\":\"110\"}}}"));
    start();

    Request first = nth("watch", 1);
    assertThat(first.uri())
        .contains("labelSelector=%21snapshot.storage.kubernetes.io%2Fmanaged-by")
        .contains("watch=true")
        .contains("allowWatchBookmarks=true")
        .contains("resourceVersion=100");
    Request patch = nth("patch", 1);
    assertThat(patch.uri()).startsWith(ImportedSnapshots.CONTENTS + "/import-held?");
    assertThat(JsonParser.at(JsonParser.parse(patch.body()), "metadata", "resourceVersion"))
        .isEqualTo("103");
    Request second = nth("watch", 2);
    assertThat(second.uri()).contains("resourceVersion=110");
    imports.settle();

    assertThat(patches()).containsExactly("import-held");
  }

  @Test
  void anExpiredWatchStartsOverWithAFreshListWhetherTheServerSaysSoInAnEventOrInTheStatus()
      throws Exception {
    script
        .then("list", list("100", ""))
        .then(
            "watch",
            watch(
                "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                    + "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}"))
        .then("list", list("200", ""))
        .then("watch", new Answer(410, "{\"kind\":\"Status\",\"code\":410}"))
        .then("list", list("300", "", content("import-held", "250", DRIVER, HELD, null)));
    start();

    nth("patch", 1);
    nth("watch", 3);

    List<String> calls =
        api.seen.stream()
            .filter(r -> !kind(r).equals("patch"))
            .limit(6)
            .map(r -> kind(r) + version(r))
            .toList();
    assertThat(calls)
        .containsExactly("list", "watch@100", "list", "watch@200", "list", "watch@300");
    assertThat(patches()).containsExactly("import-held");
  }

  @Test
  void aContentChangedBeforeItWasLabelledIsNotForcedButLabelledAtItsNewVersion() throws Exception {
    script
        .then("list", list("100", "", content("import-held", "7", DRIVER, HELD, null)))
        .then("patch", new Answer(409, "{\"kind\":\"Status\",\"code\":409}"))
        .then("watch", watch(event("MODIFIED", content("import-held", "8", DRIVER, HELD, null))));
    start();

    Request refused = nth("patch", 1);
    Request retried = nth("patch", 2);

    assertThat(JsonParser.at(JsonParser.parse(refused.body()), "metadata", "resourceVersion"))
        .isEqualTo("7");
    assertThat(JsonParser.at(JsonParser.parse(retried.body()), "metadata", "resourceVersion"))
        .isEqualTo("8");
  }

  @Test
  void aLongListIsReadPageByPage() throws Exception {
    script
        .then("list", list("100", "page-2", content("import-a", "7", DRIVER, HELD, null)))
        .then("list", list("100", "", content("import-b", "8", DRIVER, HELD_TOO, null)));
    start();

    nth("watch", 1);
    imports.settle();

    List<Request> lists = api.seen.stream().filter(r -> kind(r).equals("list")).toList();
    assertThat(lists).hasSize(2);
    assertThat(lists.get(1).uri()).contains("continue=page-2");
    assertThat(patches()).containsExactlyInAnyOrder("import-a", "import-b");
  }

  // ---- the fake's script -------------------------------------------------------------------

  Request nth(String kind, int n) throws InterruptedException {
    return nth(api, kind, n);
  }

  /** The {@code n}th request of a kind, once the fake has seen it; fails after 10 s. */
  static Request nth(ApiServerFake api, String kind, int n) throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (true) {
      List<Request> matching = api.seen.stream().filter(r -> kind(r).equals(kind)).toList();
      if (matching.size() >= n) {
        return matching.get(n - 1);
      }
      assertThat(System.nanoTime()).as("%s request %d within 10 s", kind, n).isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  List<String> patches() {
    return patches(api, ImportedSnapshots.CONTENTS);
  }

  /** Names of the contents of {@code collection} patched so far, in order. */
  static List<String> patches(ApiServerFake api, String collection) {
    return api.seen.stream()
        .filter(r -> kind(r).equals("patch"))
        .map(r -> r.uri().substring(collection.length() + 1, r.uri().indexOf('?')))
        .toList();
  }

  static String kind(Request r) {
    if (r.method().equals("PATCH")) {
      return "patch";
    }
    return r.uri().contains("watch=true") ? "watch" : "list";
  }

  static String version(Request r) {
    int at = r.uri().indexOf("&resourceVersion=");
    if (at < 0) {
      return "";
    }
    String rest = r.uri().substring(at + "&resourceVersion=".length());
    return "@" + rest.substring(0, rest.indexOf('&'));
  }

  /** Answers each kind of request in turn; once a kind's answers are used up, its default. */
  static final class Script implements Function<Request, Answer> {
    private final Map<String, Deque<Answer>> queued = new ConcurrentHashMap<>();

    Script then(String kind, Answer answer) {
      queued.computeIfAbsent(kind, k -> new ConcurrentLinkedDeque<>()).add(answer);
      return this;
    }

    @Override
    public Answer apply(Request request) {
      String kind = kind(request);
      Deque<Answer> answers = queued.get(kind);
      Answer answer = answers == null ? null : answers.poll();
      if (answer != null) {
        return answer;
      }
      return switch (kind) {
        case "list" -> list("999", "");
        case "watch" -> {
          // A quiet watch: nothing happens until the server ends it.
          try {
            Thread.sleep(2000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          yield new Answer(200, "");
        }
        default -> new Answer(200, "{}");
      };
    }
  }

  static Answer list(String resourceVersion, String next, Object... items) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("resourceVersion", resourceVersion);
    if (!next.isEmpty()) {
      metadata.put("continue", next);
    }
    return new Answer(
        200,
        Json.write(
            Json.object(
                "apiVersion",
                "snapshot.storage.k8s.io/v1",
                "kind",
                "VolumeSnapshotContentList",
                "metadata",
                metadata,
                "items",
                new ArrayList<>(Arrays.asList(items)))));
  }

  static Answer watch(String... lines) {
    return new Answer(200, String.join("\n", lines) + "\n");
  }

  static String event(String type, Object object) {
    return Json.write(Json.object("type", type, "object", object));
  }

  /** A VolumeSnapshotContent; a null handle makes it dynamic, a null label leaves it out. */
  static Map<String, Object> content(
      String name, String resourceVersion, String driver, String handle, String managedBy) {
    return content(
        "snapshot.storage.k8s.io/v1",
        "VolumeSnapshotContent",
        name,
        resourceVersion,
        driver,
        handle == null
            ? Map.of("volumeHandle", "vol-aaaaaaaaaaaaaaaaaaaa")
            : Map.of("snapshotHandle", handle),
        managedBy);
  }

  /**
   * A content of {@code kind} (a VolumeSnapshotContent, a VolumeGroupSnapshotContent) bound to an
   * object of the same name; a null label leaves it out.
   */
  static Map<String, Object> content(
      String apiVersion,
      String kind,
      String name,
      String resourceVersion,
      String driver,
      Map<String, Object> source,
      String managedBy) {
    // volumeSnapshotRef, volumeGroupSnapshotRef
    String ref = Character.toLowerCase(kind.charAt(0)) + kind.substring(1, kind.indexOf("Content"));
    return Json.object(
        "apiVersion",
        apiVersion,
        "kind",
        kind,
        "metadata",
        metadata(name, resourceVersion, managedBy),
        "spec",
        Json.object(
            "driver",
            driver,
            "deletionPolicy",
            "Delete",
            "source",
            source,
            ref + "Ref",
            Map.of("namespace", "default", "name", name)));
  }

  /** A content's metadata; a null label leaves it out. */
  static Map<String, Object> metadata(String name, String resourceVersion, String managedBy) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("name", name);
    metadata.put("resourceVersion", resourceVersion);
    if (managedBy != null) {
      metadata.put("labels", Map.of("snapshot.storage.kubernetes.io/managed-by", managedBy));
    }
    return metadata;
  }
}

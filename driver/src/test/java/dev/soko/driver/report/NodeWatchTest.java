package dev.soko.driver.report;

import static dev.soko.driver.report.ImportedSnapshotsTest.event;
import static dev.soko.driver.report.ImportedSnapshotsTest.kind;
import static dev.soko.driver.report.ImportedSnapshotsTest.version;
import static dev.soko.driver.report.ImportedSnapshotsTest.watch;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.json.Json;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.report.ApiServerFake.Answer;
import dev.soko.driver.report.ImportedSnapshotsTest.Script;
import dev.soko.driver.testing.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NodeWatch against a scripted API server: the GET, the watch, its events and its expiry. */
class NodeWatchTest {
  private static final Duration WATCH_BOUND = Duration.ofSeconds(10);

  static final String NODE = "node-1";

  @TempDir Path dir;
  ApiServerFake api;
  Script script;
  final NodeLabels labels = NodeLabels.unknownBecause("not read yet");
  NodeWatch watch;

  @BeforeEach
  void startFake() throws Exception {
    api = new ApiServerFake();
    script = new Script();
    api.answers = script;
  }

  @AfterEach
  void stop() {
    if (watch != null) {
      watch.close();
    }
    api.close();
  }

  @Test
  void theFirstReadTakesTheLabelsAndTheWatchFollowsTheirChangesUntilTheNodeIsDeleted()
      throws Exception {
    script
        .then("list", new Answer(200, Json.write(node("10", Map.of("disk", "fast")))))
        .then(
            "watch",
            watch(
                event("MODIFIED", node("11", Map.of("disk", "slow"))),
                event("DELETED", node("12", Map.of("disk", "slow")))));
    watch = new NodeWatch(api.client(dir, "t"), NODE, labels, Duration.ofMinutes(5));

    assertThat(watch.readNow()).isTrue();
    assertThat(labels.state().labels()).containsExactly(Map.entry("disk", "fast"));

    List<NodeLabels.State> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    labels.onChange(() -> seen.add(labels.state()));
    watch.start();
    Await.until("the Node deleted", WATCH_BOUND, () -> !labels.state().known());
    assertThat(seen).extracting(NodeLabels.State::labels).first().isEqualTo(Map.of("disk", "slow"));
    assertThat(labels.state().unknownReason()).isEqualTo("Node node-1 was deleted");
    ApiServerFake.Request first =
        api.seen.stream().filter(r -> kind(r).equals("watch")).findFirst().orElseThrow();
    assertThat(first.uri())
        .startsWith("/api/v1/nodes?fieldSelector=metadata.name%3Dnode-1&watch=true")
        .contains("allowWatchBookmarks=true");
    assertThat(version(first)).isEqualTo("@10");
  }

  @Test
  void anExpiredWatchReadsTheNodeAgainAndWatchesFromItsNewVersion() throws Exception {
    script
        .then("list", new Answer(200, Json.write(node("10", Map.of("a", "1")))))
        .then(
            "watch",
            watch(
                "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                    + "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}"))
        .then("list", new Answer(200, Json.write(node("20", Map.of("a", "2")))))
        .then("watch", new Answer(410, "{\"kind\":\"Status\",\"code\":410}"))
        .then("list", new Answer(200, Json.write(node("30", Map.of("a", "3")))));
    watch = new NodeWatch(api.client(dir, "t"), NODE, labels, Duration.ofMinutes(5));
    watch.start();

    Await.until(
        "the third read's labels",
        WATCH_BOUND,
        () -> Map.of("a", "3").equals(labels.state().labels()));
    Await.until(
        "a third watch",
        WATCH_BOUND,
        () -> api.seen.stream().filter(r -> kind(r).equals("watch")).count() >= 3);
    assertThat(api.seen.stream().limit(6).map(r -> kind(r) + version(r)).toList())
        .containsExactly("list", "watch@10", "list", "watch@20", "list", "watch@30");
  }

  @Test
  void aNodeThatDoesNotExistMakesTheLabelsUnknownAndIsAskedForAgain() throws Exception {
    script
        .then("list", new Answer(404, "{\"kind\":\"Status\",\"code\":404}"))
        .then("list", new Answer(200, Json.write(node("5", Map.of("b", "x")))));
    watch = new NodeWatch(api.client(dir, "t"), NODE, labels, Duration.ofMinutes(5));

    assertThat(watch.readNow()).isFalse();
    assertThat(labels.state().unknownReason()).isEqualTo("Node node-1 does not exist");
    watch.start();
    Await.until(
        "the Node read once it exists",
        WATCH_BOUND,
        () -> Map.of("b", "x").equals(labels.state().labels()));
  }

  static Map<String, Object> node(String resourceVersion, Map<String, String> nodeLabels) {
    return Json.object(
        "apiVersion",
        "v1",
        "kind",
        "Node",
        "metadata",
        Json.object("name", NODE, "resourceVersion", resourceVersion, "labels", nodeLabels));
  }
}

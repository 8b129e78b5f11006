package dev.soko.driver.report;

import static dev.soko.driver.report.ImportedSnapshotsTest.DRIVER;
import static dev.soko.driver.report.ImportedSnapshotsTest.list;
import static dev.soko.driver.report.ImportedSnapshotsTest.metadata;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.report.ApiServerFake.Request;
import dev.soko.driver.report.ContentLabeller.Timing;
import dev.soko.driver.report.ImportedSnapshotsTest.Script;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which VolumeGroupSnapshotClasses the controller labels for its group csi-snapshotter, against a
 * fake API server: every class of this driver without the label (the driver is a class's top-level
 * field, not a spec's), never another driver's or a labelled one.
 */
class GroupSnapshotClassesTest {
  @TempDir Path dir;
  final ApiServerFake api;
  final Script script = new Script();
  GroupSnapshotClasses classes;

  GroupSnapshotClassesTest() throws Exception {
    api = new ApiServerFake();
    api.answers = script;
  }

  @AfterEach
  void stop() {
    if (classes != null) {
      classes.close();
    }
    api.close();
  }

  @Test
  void everyUnlabelledClassOfThisDriverIsLabelledAndNoOtherIsTouched() throws Exception {
    script.then(
        "list",
        list(
            "100",
            "",
            groupClass("made-by-a-suite", "7", DRIVER, null),
            groupClass("other-driver", "8", "other.csi.example", null),
            groupClass("owned", "9", DRIVER, "soko_groups"),
            groupClass("labelled-elsewhere", "10", DRIVER, "node-2")));
    classes =
        new GroupSnapshotClasses(
            api.client(dir, "t"),
            DRIVER,
            "soko_groups",
            new Timing(Duration.ofMinutes(5), Duration.ofMillis(100), Duration.ofMinutes(5)));
    classes.start();

    Request patch = ImportedSnapshotsTest.nth(api, "patch", 1);
    classes.settle();
    Thread.sleep(300);
    classes.settle();

    assertThat(ImportedSnapshotsTest.patches(api, GroupSnapshotClasses.CLASSES))
        .containsExactly("made-by-a-suite");
    Object body = JsonParser.parse(patch.body());
    assertThat(JsonParser.at(body, "metadata", "resourceVersion")).isEqualTo("7");
    assertThat(JsonParser.at(body, "metadata", "labels"))
        .isEqualTo(Map.of("snapshot.storage.kubernetes.io/managed-by", "soko_groups"));
  }

  /** A VolumeGroupSnapshotClass: its driver at the top level; a null label leaves it out. */
  static Map<String, Object> groupClass(
      String name, String resourceVersion, String driver, String managedBy) {
    return Json.object(
        "apiVersion",
        "groupsnapshot.storage.k8s.io/v1",
        "kind",
        "VolumeGroupSnapshotClass",
        "metadata",
        metadata(name, resourceVersion, managedBy),
        "driver",
        driver,
        "deletionPolicy",
        "Delete");
  }
}

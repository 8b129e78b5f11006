package dev.soko.driver.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PathPolicyTest {
  @TempDir Path dir;
  Path root;
  PathPolicy policy;

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createDirectories(dir.resolve("kubelet"));
    policy = new PathPolicy(List.of(root));
  }

  private void assertRejected(String path) {
    assertThatThrownBy(() -> policy.check("target path", path))
        .isInstanceOf(MountException.class)
        .extracting(e -> ((MountException) e).kind())
        .isEqualTo(MountException.Kind.REFUSED_INPUT);
  }

  @Test
  void acceptsNewAndExistingPathsUnderARoot() throws Exception {
    Path existing = Files.createDirectories(root.resolve("pods/a/mount"));
    assertThat(policy.check("target path", existing.toString())).isEqualTo(existing);
    Path fresh = root.resolve("pods/b/volumes/x/mount");
    assertThat(policy.check("target path", fresh.toString())).isEqualTo(fresh);
  }

  @Test
  void rejectsRelativeTraversalAndForeignPaths() {
    assertRejected("");
    assertRejected("relative/path");
    assertRejected(root + "/../escape");
    assertRejected(root + "/pods/./x");
    assertRejected(root.toString());
    assertRejected("/etc/passwd");
    assertRejected(dir.resolve("kubelet-evil/x").toString());
    assertRejected(root + "/pods/\nx");
    assertRejected(root + "/" + "a".repeat(5000));
    assertRejected(root + "/pods/" + "a".repeat(256) + "/mount"); // NAME_MAX: 255 bytes
    assertRejected(root + "/pods/" + "é".repeat(128)); // 256 bytes in UTF-8
    assertThat(policy.check("target path", root + "/pods/" + "a".repeat(255)))
        .isEqualTo(root.resolve("pods/" + "a".repeat(255)));
  }

  @Test
  void rejectsSymlinksThatLeaveTheRoot() throws Exception {
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Files.createSymbolicLink(root.resolve("link"), outside);
    assertRejected(root + "/link");
    assertRejected(root + "/link/child/target");
    Path inside = Files.createDirectories(root.resolve("real"));
    Files.createSymbolicLink(root.resolve("inner"), inside);
    assertRejected(root + "/inner"); // the target itself must never be a symlink
    assertThat(policy.check("staging path", root + "/inner/child"))
        .isEqualTo(root.resolve("inner/child"));
  }
}

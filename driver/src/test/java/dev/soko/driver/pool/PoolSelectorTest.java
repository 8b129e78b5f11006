package dev.soko.driver.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PoolSelectorTest {
  static PoolConfig pool(Map<String, String> selector) {
    return new PoolConfig("fast", Path.of("/fast"), 0, 1, Set.of("ext4"), false, false, selector);
  }

  static NodeLabels.State labels(Map<String, String> labels) {
    return new NodeLabels.State(labels, "");
  }

  @Test
  void everyLabelOfTheSelectorMustBeOnTheNodeWithItsValueOthersDoNotMatter() {
    PoolConfig fast = pool(Map.of("disk", "nvme", "soko.dev/zone", "a"));
    assertThat(
            PoolSelector.verdict(
                fast, labels(Map.of("disk", "nvme", "soko.dev/zone", "a", "other", "x"))))
        .isEqualTo(PoolVerdict.READY);
    PoolVerdict wrong = PoolSelector.verdict(fast, labels(Map.of("disk", "hdd")));
    assertThat(wrong.state()).isEqualTo(PoolVerdict.State.NOT_SELECTED);
    assertThat(wrong.reason())
        .isEqualTo(
            "this node does not match the pool's node selector: label disk is 'hdd', not 'nvme';"
                + " no label soko.dev/zone");
    assertThat(PoolSelector.verdict(pool(Map.of("empty", "")), labels(Map.of("empty", ""))))
        .as("an empty value matches an empty value")
        .isEqualTo(PoolVerdict.READY);
    assertThat(PoolSelector.verdict(pool(Map.of("empty", "")), labels(Map.of())).state())
        .as("but not a missing label")
        .isEqualTo(PoolVerdict.State.NOT_SELECTED);
  }

  @Test
  void unknownLabelsSelectOnlyPoolsWithoutASelector() {
    NodeLabels.State unknown = new NodeLabels.State(null, "no API server access");
    assertThat(PoolSelector.verdict(pool(Map.of()), unknown)).isEqualTo(PoolVerdict.READY);
    PoolVerdict verdict = PoolSelector.verdict(pool(Map.of("disk", "nvme")), unknown);
    assertThat(verdict.state()).isEqualTo(PoolVerdict.State.NOT_SELECTED);
    assertThat(verdict.reason())
        .isEqualTo(
            "the pool has a node selector and this node's labels are unknown: no API server"
                + " access");
  }

  @Test
  void nodeLabelsTellTheirListenersOfChangesOnly() {
    NodeLabels labels = NodeLabels.unknownBecause("not read yet");
    List<NodeLabels.State> seen = new ArrayList<>();
    labels.onChange(() -> seen.add(labels.state()));
    labels.set(Map.of("disk", "nvme"));
    labels.set(Map.of("disk", "nvme"));
    labels.unknown("Node n1 was deleted");
    labels.unknown("Node n1 was deleted");
    assertThat(seen)
        .containsExactly(
            new NodeLabels.State(Map.of("disk", "nvme"), ""),
            new NodeLabels.State(null, "Node n1 was deleted"));
  }
}

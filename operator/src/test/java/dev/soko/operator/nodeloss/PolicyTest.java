package dev.soko.operator.nodeloss;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.NodeLossSpec;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PolicyTest {
  static NodeLossSpec spec(NodeLossSpec.Policy policy, String after) {
    NodeLossSpec s = new NodeLossSpec();
    s.setPolicy(policy);
    s.setDeleteAfter(after);
    return s;
  }

  @Test
  void retainIsTheDefault() {
    assertThat(Policy.of(new NodeLossSpec())).isEqualTo(Policy.RETAIN);
    assertThat(Policy.of(null)).isEqualTo(Policy.RETAIN);
  }

  @Test
  void deleteReadsGoStyleDurations() {
    assertThat(Policy.of(spec(NodeLossSpec.Policy.Delete, "1h30m")).deleteAfter())
        .isEqualTo(Duration.ofMinutes(90));
    assertThat(Policy.of(spec(NodeLossSpec.Policy.Delete, null)).deleteAfter())
        .isEqualTo(Duration.ofHours(1));
    assertThat(Policy.parse("45s")).isEqualTo(Duration.ofSeconds(45));
    assertThat(Policy.format(Duration.ofMinutes(90))).isEqualTo("1h30m");
  }

  @Test
  void anUnreadableOrOutOfRangeDelayNeverDeletes() {
    for (String bad : new String[] {"1d", "10", "-1h", "29s", "8761h", "", "1h 30m"}) {
      assertThat(Policy.of(spec(NodeLossSpec.Policy.Delete, bad))).as(bad).isEqualTo(Policy.RETAIN);
    }
    assertThat(Policy.of(spec(NodeLossSpec.Policy.Delete, "30s")).delete()).isTrue();
  }
}

package dev.soko.driver.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonParserTest {
  @Test
  void aWatchEventOfANodeIsReadWithItsLabels() {
    String line =
        "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
            + "\"resourceVersion\":\"42\",\"labels\":{\"soko.dev/disk\":\"nvme\","
            + "\"q\":\"a\\\"b\\\\c\\u00e9\\/\"}},\"status\":{\"capacity\":{\"cpu\":\"2\"},"
            + "\"images\":[{\"sizeBytes\":123,\"names\":[]}],\"ratio\":-1.5e3,"
            + "\"unschedulable\":false,\"taints\":null}}}";
    Object event = JsonParser.parse(line);
    assertThat(JsonParser.at(event, "type")).isEqualTo("MODIFIED");
    assertThat(JsonParser.at(event, "object", "metadata", "resourceVersion")).isEqualTo("42");
    assertThat(JsonParser.at(event, "object", "metadata", "labels"))
        .isEqualTo(Map.of("soko.dev/disk", "nvme", "q", "a\"b\\cé/"));
    assertThat(JsonParser.at(event, "object", "status", "images"))
        .isEqualTo(List.of(Map.of("sizeBytes", 123L, "names", List.of())));
    assertThat(JsonParser.at(event, "object", "status", "ratio")).isEqualTo(-1500.0);
    assertThat(JsonParser.at(event, "object", "status", "unschedulable")).isEqualTo(false);
    assertThat(JsonParser.at(event, "object", "status", "taints")).isNull();
    assertThat(JsonParser.at(event, "object", "kind", "deeper")).as("not an object").isNull();
  }

  @Test
  void anythingButOneJsonValueIsRefused() {
    for (String bad :
        List.of(
            "",
            "{",
            "{\"a\":1}x",
            "{\"a\" 1}",
            "[1,]",
            "\"open",
            "tru",
            "{a:1}",
            "\"\\x\"",
            "{\"a\":1,\"a\":2}",
            "\"tab\there\"")) {
      assertThatThrownBy(() -> JsonParser.parse(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("bad JSON");
    }
  }
}

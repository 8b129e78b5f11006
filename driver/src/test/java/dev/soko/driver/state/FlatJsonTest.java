package dev.soko.driver.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FlatJsonTest {

  @Test
  void roundTripsAwkwardStrings() {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("plain", "value");
    fields.put("quotes", "say \"hi\" \\ back/slash");
    fields.put("control", "tab\tnew\nline\r\u0001");
    fields.put("unicode", "倉庫 ü \u2028");
    fields.put("", "");
    assertThat(FlatJson.parse(FlatJson.write(fields))).containsExactlyEntriesOf(fields);
  }

  /** The layout of every record file on disk: drivers before and after read the same bytes. */
  @Test
  void writesOneFieldALineInTheOrderGiven() {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("kind", "volume");
    fields.put("id", "v-1");
    assertThat(FlatJson.write(fields))
        .isEqualTo("{\n  \"kind\": \"volume\",\n  \"id\": \"v-1\"\n}\n");
  }

  @Test
  void parsesEscapesWrittenByOthers() {
    assertThat(FlatJson.parse("{\"a\":\"\\u0041\\/\\b\"}")).containsEntry("a", "A/\b");
    assertThat(FlatJson.parse(" { } ")).isEmpty();
  }

  @Test
  void rejectsTornOrForeignDocuments() {
    assertThatThrownBy(() -> FlatJson.parse("{\"a\": \"b\""))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FlatJson.parse("{\"a\": 1}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FlatJson.parse("{\"a\":\"b\"} x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FlatJson.parse("{\"a\":\"b\",\"a\":\"c\"}"))
        .hasMessageContaining("duplicate");
    assertThatThrownBy(() -> FlatJson.parse("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FlatJson.parse("{\"a\":\"\\x\"}"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}

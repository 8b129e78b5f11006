package dev.soko.driver.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

  @Test
  void writesNestedObjectsAndArraysInOrderAndLeavesNullValuesOut() {
    String json =
        Json.write(
            Json.object(
                "b", 1,
                "a", Json.object("x", List.of(1L, "two", true), "gone", null),
                "empty", List.of()));

    assertThat(json).isEqualTo("{\"b\":1,\"a\":{\"x\":[1,\"two\",true]},\"empty\":[]}");
  }

  @Test
  void indentedTextPutsEachMemberOnItsLineAndKeepsEmptyOnesShort() {
    String json =
        Json.writeIndented(
            Json.object(
                "a", Json.object("x", List.of(1, "two")), "gone", null, "empty", List.of()));

    assertThat(json)
        .isEqualTo(
            "{\n"
                + "  \"a\": {\n"
                + "    \"x\": [\n"
                + "      1,\n"
                + "      \"two\"\n"
                + "    ]\n"
                + "  },\n"
                + "  \"empty\": []\n"
                + "}");
    assertThat(Json.writeIndented(Map.of())).isEqualTo("{}");
  }

  @Test
  void escapesQuotesBackslashesAndControlCharacters() {
    String json = Json.write("a\"b\\c\nd\te\u0001f\u2028ü");

    assertThat(json).isEqualTo("\"a\\\"b\\\\c\\nd\\te\\u0001f\\u2028ü\"");
  }

  @Test
  void writesNullInsideArrays() {
    assertThat(Json.write(Arrays.asList("a", null))).isEqualTo("[\"a\",null]");
  }

  @Test
  void refusesTypesItCannotWrite() {
    assertThatThrownBy(() -> Json.write(List.of(1.5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Double");
  }
}

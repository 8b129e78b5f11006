package dev.soko.driver.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.event.KeyValuePair;

class LogfmtLayoutTest {
  private final LoggerContext context = new LoggerContext();

  private LoggingEvent event(String message, Throwable thrown) {
    LoggingEvent event =
        new LoggingEvent(
            "x",
            context.getLogger("dev.soko.driver.server.DriverServer"),
            Level.WARN,
            message,
            thrown,
            null);
    event.setTimeStamp(0);
    return event;
  }

  @Test
  void oneLineWithQuotedFieldsAndKeyValues() {
    LoggingEvent event = event("rpc failed", null);
    event.setKeyValuePairs(
        List.of(
            new KeyValuePair("method", "CreateVolume"), new KeyValuePair("error", "a \"b\"\nc")));
    assertThat(new LogfmtLayout().doLayout(event))
        .isEqualTo(
            "time=1970-01-01T00:00:00Z level=warn logger=server.DriverServer msg=\"rpc failed\""
                + " method=CreateVolume error=\"a \\\"b\\\"\\nc\"\n");
  }

  @Test
  void throwablesStayOnTheLine() {
    String line = new LogfmtLayout().doLayout(event("boom", new IllegalStateException("bad")));
    assertThat(line)
        .contains("error=\"java.lang.IllegalStateException: bad\"")
        .contains("stack=\"");
    assertThat(line.indexOf('\n')).isEqualTo(line.length() - 1);
  }

  /** A line separator that is not a control character still cannot split a log line. */
  @Test
  void unicodeLineSeparatorsAreEscaped() {
    LoggingEvent event = event("name", null);
    event.setKeyValuePairs(List.of(new KeyValuePair("volume", "a\u2028b\u2029c\u0001")));
    assertThat(new LogfmtLayout().doLayout(event))
        .endsWith(" volume=\"a\\u2028b\\u2029c\\u0001\"\n");
  }
}

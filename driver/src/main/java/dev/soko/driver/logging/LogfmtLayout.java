package dev.soko.driver.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.LayoutBase;
import dev.soko.driver.json.Json;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import org.slf4j.event.KeyValuePair;

/**
 * One logfmt line per event: {@code time=... level=info logger=... msg="..." key=value}. Key/value
 * pairs come from SLF4J's fluent API, so fields stay machine-readable; a throwable becomes {@code
 * error=} and an escaped {@code stack=} field so that a line is always one event.
 */
public final class LogfmtLayout extends LayoutBase<ILoggingEvent> {
  /** Enough to find the bug; the frames below are the gRPC and JDK machinery. */
  static final int MAX_FRAMES = 25;

  @Override
  public String doLayout(ILoggingEvent event) {
    StringBuilder line = new StringBuilder(160);
    line.append("time=").append(Instant.ofEpochMilli(event.getTimeStamp()));
    line.append(" level=").append(event.getLevel().toString().toLowerCase(Locale.ROOT));
    line.append(" logger=").append(shortName(event.getLoggerName()));
    append(line, "msg", event.getFormattedMessage());
    List<KeyValuePair> pairs = event.getKeyValuePairs();
    if (pairs != null) {
      for (KeyValuePair pair : pairs) {
        append(line, pair.key, String.valueOf(pair.value));
      }
    }
    IThrowableProxy thrown = event.getThrowableProxy();
    if (thrown != null) {
      append(line, "error", thrown.getClassName() + ": " + thrown.getMessage());
      append(line, "stack", stack(thrown));
    }
    return line.append('\n').toString();
  }

  /** {@code dev.soko.driver.server.DriverServer} becomes {@code server.DriverServer}. */
  static String shortName(String logger) {
    String prefix = "dev.soko.driver.";
    return logger.startsWith(prefix) ? logger.substring(prefix.length()) : logger;
  }

  static void append(StringBuilder line, String key, String value) {
    line.append(' ').append(key).append('=');
    if (!value.isEmpty()
        && value.chars().allMatch(c -> c > ' ' && c != '"' && c != '=' && c < 127)) {
      line.append(value);
      return;
    }
    Json.quote(line, value);
  }

  private static String stack(IThrowableProxy thrown) {
    StringBuilder stack = new StringBuilder();
    for (IThrowableProxy t = thrown; t != null; t = t.getCause()) {
      if (t != thrown) {
        stack.append("caused by ").append(t.getClassName()).append(": ").append(t.getMessage());
        stack.append('\n');
      }
      StackTraceElementProxy[] frames = t.getStackTraceElementProxyArray();
      int shown = Math.min(frames.length, MAX_FRAMES);
      for (int i = 0; i < shown; i++) {
        stack.append("  at ").append(frames[i].getStackTraceElement()).append('\n');
      }
      if (frames.length > shown) {
        stack.append("  ... ").append(frames.length - shown).append(" more\n");
      }
    }
    return stack.toString();
  }
}

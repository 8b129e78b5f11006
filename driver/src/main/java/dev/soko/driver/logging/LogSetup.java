package dev.soko.driver.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import dev.soko.driver.config.DriverConfig;
import java.util.List;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * Configures logback in code (found through {@code META-INF/services}), so start-up parses no XML:
 * logfmt lines on stderr at INFO until {@link #setLevel} applies {@code --log-level}.
 */
public final class LogSetup extends ContextAwareBase implements Configurator {
  /** The level names, as {@code --log-level} takes them. */
  public static final List<String> LEVELS = DriverConfig.LOG_LEVELS;

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    LogfmtLayout layout = new LogfmtLayout();
    layout.setContext(context);
    layout.start();
    LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
    encoder.setContext(context);
    encoder.setLayout(layout);
    encoder.start();
    ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setContext(context);
    appender.setName("stderr");
    appender.setTarget("System.err");
    appender.setEncoder(encoder);
    appender.start();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.addAppender(appender);
    root.setLevel(Level.INFO);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Applies a level name from {@link #LEVELS} to the whole driver. */
  public static void setLevel(String level) {
    if (!LEVELS.contains(level.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("log level must be one of " + LEVELS + ", got " + level);
    }
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.toLevel(level, Level.INFO));
    }
  }
}

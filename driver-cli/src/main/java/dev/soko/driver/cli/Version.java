package dev.soko.driver.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The build's version, from a resource Maven filters at build time. */
public final class Version {
  private Version() {}

  private static final String RESOURCE = "/dev/soko/driver/version.properties";

  /** The driver version reported in GetPluginInfo and {@code --version}. */
  public static String current() {
    try (InputStream in = Version.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        return "unknown";
      }
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version", "unknown");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

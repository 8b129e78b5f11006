package dev.soko.driver.config;

import java.nio.file.Path;

/** A CSI endpoint; only Unix domain sockets, {@code unix:///absolute/path}, are supported. */
public record Endpoint(Path socket) {
  private static final String SCHEME = "unix://";

  public static Endpoint parse(String endpoint) {
    if (!endpoint.startsWith(SCHEME)) {
      throw new IllegalArgumentException(
          "endpoint must be unix:///absolute/path.sock, got '" + endpoint + "'");
    }
    String path = endpoint.substring(SCHEME.length());
    if (!path.startsWith("/") || path.length() < 2 || path.endsWith("/")) {
      throw new IllegalArgumentException(
          "endpoint must name an absolute socket path after unix://, got '" + endpoint + "'");
    }
    if (!fitsSocketAddress(Path.of(path))) {
      throw new IllegalArgumentException("socket path is longer than 107 bytes: " + path);
    }
    return new Endpoint(Path.of(path).normalize());
  }

  /** True when {@code socket} fits a Unix socket address: sun_path holds 108 bytes with the NUL. */
  public static boolean fitsSocketAddress(Path socket) {
    return socket.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 107;
  }
}

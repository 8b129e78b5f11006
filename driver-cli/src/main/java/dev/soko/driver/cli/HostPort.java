package dev.soko.driver.cli;

import java.net.InetSocketAddress;

/** {@code host:port} or {@code [v6]:port}, as given to {@code --metrics-address}. */
public final class HostPort {
  private HostPort() {}

  public static InetSocketAddress parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("expected HOST:PORT, got '" + text + "'");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("port in '" + text + "' is not a number");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is out of range");
    }
    // Unresolved: resolution happens when the server binds, with a clear error if it fails.
    return InetSocketAddress.createUnresolved(host, port);
  }
}

package dev.soko.driver.server;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Prepares a socket path for binding. A socket left by a crashed driver is removed (kubelet and the
 * sidecars reconnect to the new one); a socket that still accepts connections belongs to a live
 * process, and taking it over would cut that process off, so start-up is refused. Anything that is
 * not a socket is never deleted.
 */
final class SocketGuard {
  private SocketGuard() {}

  static void prepare(Path socket) throws IOException {
    Files.createDirectories(socket.getParent());
    if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    BasicFileAttributes attributes =
        Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!attributes.isOther()) {
      throw new IOException(socket + " exists and is not a socket; refusing to replace it");
    }
    if (accepts(socket)) {
      throw new IOException("another process is listening on " + socket);
    }
    Files.delete(socket);
  }

  private static boolean accepts(Path socket) throws IOException {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(socket));
      return true;
    } catch (ConnectException e) {
      return false;
    }
  }
}

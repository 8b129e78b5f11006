package dev.soko.driver.server;

import io.grpc.Server;
import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.SecureRandom;

/**
 * Prepares a socket path for binding. A socket left by a crashed driver is removed (kubelet and the
 * sidecars reconnect to the new one); a socket that still accepts connections belongs to a live
 * process, and taking it over would cut that process off, so start-up is refused. Anything that is
 * not a socket is never deleted.
 *
 * <p>At shutdown a server removes its socket only once it has stopped listening and nothing accepts
 * connections there ({@link #removeIfDead}): a new pod's driver may have bound the same path as
 * soon as this one stopped listening, and removing that socket would make the kubelet deregister
 * the new driver, which then never registers again.
 */
final class SocketGuard {
  private static final SecureRandom RANDOM = new SecureRandom();

  private SocketGuard() {}

  /**
   * Removes {@code socket} when it is a socket nobody listens on: the caller's own, once it stopped
   * serving. A socket that accepts belongs to whoever bound the path since and stays. The check and
   * the removal are two steps; a successor binding between them is a window of microseconds,
   * against the whole shutdown without the check.
   *
   * @return whether the file was removed
   */
  /** Builds a server bound to the given socket path, not yet started. */
  @FunctionalInterface
  interface Binding {
    Server build(Path at) throws IOException;
  }

  /**
   * Starts a server on a hidden name beside {@code socket}, then renames that file to {@code
   * socket}: clients never see a path without a listener, and the server's own address stays the
   * hidden name. That matters at shutdown: Netty removes the file at the server's bound address
   * when it closes the listener, and by then {@code socket} may be a successor's. The kubelet's
   * plugin watcher ignores hidden files, so the hidden name is never registered.
   */
  static Server bindThenPublish(Path socket, Binding binding) throws IOException {
    prepare(socket);
    Path hidden =
        socket.resolveSibling(
            "." + socket.getFileName() + "." + Long.toHexString(RANDOM.nextLong() >>> 32));
    Server server = binding.build(hidden).start();
    try {
      Files.move(hidden, socket, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      server.shutdownNow();
      Files.deleteIfExists(hidden);
      throw e;
    }
    return server;
  }

  static boolean removeIfDead(Path socket) throws IOException {
    if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)
        || !Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
            .isOther()
        || accepts(socket)) {
      return false;
    }
    return Files.deleteIfExists(socket);
  }

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

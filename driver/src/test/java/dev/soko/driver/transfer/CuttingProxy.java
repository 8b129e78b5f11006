package dev.soko.driver.transfer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay on loopback in front of a data port, as a network between two nodes: it passes the
 * TLS bytes through unread and can cut every connection once a number of bytes went from the port
 * to the reader (a connection reset midway), or refuse new connections (a node whose driver is
 * down). It counts the bytes it passed to the reader.
 */
final class CuttingProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final AtomicLong toReader = new AtomicLong();
  private volatile long cutAt = Long.MAX_VALUE;
  private volatile boolean refuseAfterCut;
  private volatile boolean refusing;

  CuttingProxy(String targetEndpoint) throws IOException {
    int colon = targetEndpoint.lastIndexOf(':');
    this.target =
        new InetSocketAddress(
            targetEndpoint.substring(0, colon),
            Integer.parseInt(targetEndpoint.substring(colon + 1)));
    this.listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    Thread accepting = new Thread(this::accept, "cutting-proxy");
    accepting.setDaemon(true);
    accepting.start();
  }

  String endpoint() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** Cuts every connection once this many more bytes have gone to the reader; once. */
  void cutAfter(long bytes) {
    cutAfter(bytes, false);
  }

  /** As {@link #cutAfter(long)}, then refusing new connections when {@code thenRefuse}. */
  void cutAfter(long bytes, boolean thenRefuse) {
    refuseAfterCut = thenRefuse;
    cutAt = toReader.get() + bytes;
  }

  /** Closes new connections at once while {@code refuse} holds; cuts the open ones now. */
  void refuse(boolean refuse) {
    refusing = refuse;
    if (refuse) {
      cutAll();
    }
  }

  long bytesToReader() {
    return toReader.get();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket reader = listener.accept();
        if (refusing) {
          reader.close();
          continue;
        }
        Socket port = new Socket(target.getAddress(), target.getPort());
        open.add(reader);
        open.add(port);
        pump(reader, port, false);
        pump(port, reader, true);
      } catch (IOException e) {
        // closed, or a connection that failed: the reader sees its own error
      }
    }
  }

  private void pump(Socket from, Socket to, boolean countsToReader) {
    Thread thread =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                  out.write(buffer, 0, n);
                  if (countsToReader && toReader.addAndGet(n) >= cutAt) {
                    cutAt = Long.MAX_VALUE;
                    refusing = refuseAfterCut;
                    cutAll();
                  }
                }
              } catch (IOException e) {
                // cut, or closed by the other side
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "cutting-proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  private void cutAll() {
    for (Socket socket : open) {
      closeQuietly(socket);
    }
    open.clear();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // nothing left to do
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    cutAll();
  }
}

package dev.soko.operator.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on loopback between a client and the API server that can cut every connection and
 * refuse new ones for a while: a dropped network, as a load balancer restart or a NAT timeout would
 * cause. TLS passes through untouched.
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket server;
  private final int upstreamPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean refusing = new AtomicBoolean();
  private final AtomicLong accepted = new AtomicLong();
  private final Thread acceptor;

  public TcpProxy(int upstreamPort) throws IOException {
    this.upstreamPort = upstreamPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return server.getLocalPort();
  }

  /** Connections accepted (and forwarded) so far. */
  public long accepted() {
    return accepted.get();
  }

  /** Closes every open connection; while refusing, new ones are closed at once. */
  public void cut(boolean refuseNew) {
    refusing.set(refuseNew);
    for (Socket s : open) {
      closeQuietly(s);
    }
    open.clear();
  }

  public void resume() {
    refusing.set(false);
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        if (refusing.get()) {
          closeQuietly(client);
          continue;
        }
        Socket upstream;
        try {
          upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
        } catch (IOException e) {
          closeQuietly(client);
          continue;
        }
        accepted.incrementAndGet();
        open.add(client);
        open.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        // closed, or upstream down: the client sees a dropped connection
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // cut
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    cut(true);
  }
}

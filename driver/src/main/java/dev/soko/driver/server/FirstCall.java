package dev.soko.driver.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Makes the call a node's sidecars make first (Identity/Probe) on a driver's socket, as plain
 * HTTP/2 bytes over a JDK socket, and waits for its answer.
 *
 * <p>The class-data archive's training start runs it (images/driver/Containerfile, hack/bench.sh):
 * a start nobody calls never loads the classes that serve a connection, so every node would load
 * them from the jar at its first Probe, and a driver that serves carries them outside the archive
 * (about 1.3 MiB more idle memory, measured). Written without gRPC's client so that the training
 * records the server's classes only: this runs in its own JVM, and the archive maps every class it
 * holds.
 *
 * <p>Usage: {@code java -cp soko-driver.jar dev.soko.driver.server.FirstCall SOCKET}; exits 0 once
 * the driver answered, 1 otherwise.
 */
public final class FirstCall {
  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int DATA = 0x0;
  private static final int HEADERS = 0x1;
  private static final int SETTINGS = 0x4;
  private static final int END_STREAM = 0x1;
  private static final int END_HEADERS = 0x4;
  private static final int STREAM = 1;
  private static final int FRAME_HEADER = 9;

  private FirstCall() {}

  public static void main(String[] args) {
    if (args.length != 1) {
      System.err.println("usage: FirstCall SOCKET");
      System.exit(2);
    }
    try {
      probe(Path.of(args[0]));
    } catch (IOException e) {
      System.err.println("FirstCall: " + e.getMessage());
      System.exit(1);
    }
  }

  /** Sends one Identity/Probe on {@code socket} and returns once its stream has ended. */
  static void probe(Path socket) throws IOException {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(socket));
      write(channel, request());
      awaitEndOfStream(channel);
    }
  }

  /** The client preface, empty settings, the call's headers and an empty ProbeRequest. */
  static byte[] request() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(PREFACE);
    frame(out, SETTINGS, 0, 0, new byte[0]);
    frame(out, HEADERS, END_HEADERS, STREAM, headerBlock());
    frame(out, DATA, END_STREAM, STREAM, new byte[5]); // uncompressed, zero-length message
    return out.toByteArray();
  }

  /** HPACK without a table or Huffman coding: indexed fields and literals only (RFC 7541). */
  private static byte[] headerBlock() {
    ByteArrayOutputStream block = new ByteArrayOutputStream();
    block.write(0x83); // :method POST (static table 3)
    block.write(0x86); // :scheme http (static table 6)
    literal(block, 4, "/csi.v1.Identity/Probe"); // :path
    literal(block, 1, "localhost"); // :authority
    literal(block, 31, "application/grpc"); // content-type
    block.write(0x00); // a literal name: te
    string(block, "te");
    string(block, "trailers");
    return block.toByteArray();
  }

  /** A literal field without indexing whose name is the static table's entry {@code index}. */
  private static void literal(ByteArrayOutputStream block, int index, String value) {
    if (index < 15) {
      block.write(index);
    } else {
      block.write(0x0f);
      block.write(index - 15);
    }
    string(block, value);
  }

  private static void string(ByteArrayOutputStream block, String value) {
    byte[] bytes = value.getBytes(StandardCharsets.US_ASCII);
    block.write(bytes.length); // every string here is shorter than 127 bytes
    block.writeBytes(bytes);
  }

  private static void frame(
      ByteArrayOutputStream out, int type, int flags, int stream, byte[] payload) {
    out.write(payload.length >>> 16);
    out.write(payload.length >>> 8);
    out.write(payload.length);
    out.write(type);
    out.write(flags);
    out.writeBytes(ByteBuffer.allocate(4).putInt(stream).array());
    out.writeBytes(payload);
  }

  private static void write(SocketChannel channel, byte[] bytes) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  /** Reads frames until one of the call's stream ends it (the trailers carry grpc-status). */
  private static void awaitEndOfStream(SocketChannel channel) throws IOException {
    ByteBuffer header = ByteBuffer.allocate(FRAME_HEADER);
    while (true) {
      readFully(channel, header.clear());
      int length =
          (header.get(0) & 0xff) << 16 | (header.get(1) & 0xff) << 8 | header.get(2) & 0xff;
      int flags = header.get(4) & 0xff;
      int stream = header.getInt(5) & 0x7fffffff;
      readFully(channel, ByteBuffer.allocate(length));
      if (stream == STREAM && (flags & END_STREAM) != 0) {
        return;
      }
    }
  }

  private static void readFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      if (channel.read(buffer) < 0) {
        throw new IOException("the driver closed the connection before it answered");
      }
    }
  }
}

package dev.soko.driver.nri;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One frame of NRI's connection multiplexer: an 8-byte header (the connection's ID, then the
 * payload's length, both unsigned 32-bit big-endian) and the payload. Two connections share the one
 * socket to the runtime, {@link #PLUGIN_SERVICE} (the runtime calls the plugin) and {@link
 * #RUNTIME_SERVICE} (the plugin calls the runtime); each carries one ttrpc byte stream, cut into
 * frames at arbitrary points.
 */
public record MuxFrame(int connection, byte[] payload) {
  public static final int HEADER = 8;

  /** The connection on which the plugin serves and the runtime calls. */
  public static final int PLUGIN_SERVICE = 1;

  /** The connection on which the runtime serves and the plugin calls. */
  public static final int RUNTIME_SERVICE = 2;

  /**
   * The largest payload written. The runtime's reader hands each frame whole to a 4096-byte
   * buffered reader and fails on a larger one, so longer streams are cut into frames of this size.
   */
  public static final int MAX_WRITTEN = 4096;

  /**
   * The largest payload read: a whole ttrpc message of the largest size ttrpc allows, which is the
   * most the runtime's writer puts in one frame. A larger length is a broken or hostile stream.
   */
  public static final int MAX_READ = TtrpcMessage.HEADER + TtrpcMessage.MAX_DATA;

  /** {@code bytes} on {@code connection} as frames of at most {@link #MAX_WRITTEN} bytes each. */
  public static byte[] encode(int connection, byte[] bytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + HEADER);
    int offset = 0;
    do {
      int length = Math.min(MAX_WRITTEN, bytes.length - offset);
      out.writeBytes(ByteBuffer.allocate(HEADER).putInt(connection).putInt(length).array());
      out.write(bytes, offset, length);
      offset += length;
    } while (offset < bytes.length);
    return out.toByteArray();
  }

  /**
   * The next frame of {@code in}, however the bytes arrive; null at the end of the stream between
   * two frames.
   *
   * @throws IOException when the stream ends inside a frame or a frame is longer than {@link
   *     #MAX_READ}
   */
  public static MuxFrame read(InputStream in) throws IOException {
    byte[] header = new byte[HEADER];
    int got = in.readNBytes(header, 0, HEADER);
    if (got == 0) {
      return null;
    }
    if (got < HEADER) {
      throw new EOFException("the NRI stream ended inside a frame header");
    }
    ByteBuffer fields = ByteBuffer.wrap(header);
    int connection = fields.getInt();
    long length = Integer.toUnsignedLong(fields.getInt());
    if (length > MAX_READ) {
      throw new IOException(
          "NRI frame of " + length + " bytes on connection " + connection + ", over " + MAX_READ);
    }
    byte[] payload = in.readNBytes((int) length);
    if (payload.length < length) {
      throw new EOFException("the NRI stream ended inside a frame");
    }
    return new MuxFrame(connection, payload);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof MuxFrame f
        && f.connection == connection
        && Arrays.equals(f.payload, payload);
  }

  @Override
  public int hashCode() {
    return 31 * connection + Arrays.hashCode(payload);
  }

  @Override
  public String toString() {
    return "MuxFrame[connection=" + connection + ", " + payload.length + " bytes]";
  }
}

package dev.soko.driver.nri;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One ttrpc message: a 10-byte header (the data's length and the stream's ID, unsigned 32-bit
 * big-endian; the type; the flags) and the data, a protobuf {@code Request} or {@code Response}. A
 * client numbers its streams 1, 3, 5, ...; the server answers on the request's stream.
 */
public record TtrpcMessage(int stream, byte type, byte flags, byte[] data) {
  public static final int HEADER = 10;

  /** The most data ttrpc accepts in one message (4 MiB). */
  public static final int MAX_DATA = 4 << 20;

  public static final byte REQUEST = 1;
  public static final byte RESPONSE = 2;

  public byte[] encode() {
    return ByteBuffer.allocate(HEADER + data.length)
        .putInt(data.length)
        .putInt(stream)
        .put(type)
        .put(flags)
        .put(data)
        .array();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TtrpcMessage m
        && m.stream == stream
        && m.type == type
        && m.flags == flags
        && Arrays.equals(m.data, data);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * stream + type) + Arrays.hashCode(data);
  }

  @Override
  public String toString() {
    return "TtrpcMessage[stream=" + stream + ", type=" + type + ", " + data.length + " bytes]";
  }
}

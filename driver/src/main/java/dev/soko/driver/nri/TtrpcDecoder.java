package dev.soko.driver.nri;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Reassembles the ttrpc messages of one multiplexed connection from its frames, which cut the byte
 * stream anywhere: inside a header, inside the data, or several messages in one frame.
 */
public final class TtrpcDecoder {
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

  /**
   * Takes the next bytes of the stream and gives the messages they complete, in order.
   *
   * @throws IOException when a message announces more than {@link TtrpcMessage#MAX_DATA} bytes; the
   *     stream cannot be resynchronised after that
   */
  public List<TtrpcMessage> feed(byte[] bytes) throws IOException {
    pending.writeBytes(bytes);
    ByteBuffer buffer = ByteBuffer.wrap(pending.toByteArray());
    List<TtrpcMessage> messages = new ArrayList<>();
    while (buffer.remaining() >= TtrpcMessage.HEADER) {
      int start = buffer.position();
      long length = Integer.toUnsignedLong(buffer.getInt(start));
      if (length > TtrpcMessage.MAX_DATA) {
        throw new IOException(
            "ttrpc message of " + length + " bytes, over " + TtrpcMessage.MAX_DATA);
      }
      if (buffer.remaining() < TtrpcMessage.HEADER + length) {
        break;
      }
      buffer.getInt();
      int stream = buffer.getInt();
      byte type = buffer.get();
      byte flags = buffer.get();
      byte[] data = new byte[(int) length];
      buffer.get(data);
      messages.add(new TtrpcMessage(stream, type, flags, data));
    }
    pending.reset();
    pending.write(buffer.array(), buffer.position(), buffer.remaining());
    return messages;
  }
}

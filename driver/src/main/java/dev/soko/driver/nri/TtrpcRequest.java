package dev.soko.driver.nri;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * ttrpc's {@code Request} message: {@code service = 1, method = 2, payload = 3, timeout_nano = 4}
 * (field 5, metadata, is neither sent nor read). Encoded by hand: it is four fields, and ttrpc's
 * own proto is not needed for anything else.
 */
public record TtrpcRequest(String service, String method, ByteString payload, long timeoutNanos) {

  public byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    try {
      out.writeString(1, service);
      out.writeString(2, method);
      out.writeBytes(3, payload);
      if (timeoutNanos != 0) {
        out.writeInt64(4, timeoutNanos);
      }
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  public static TtrpcRequest decode(byte[] data) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(data);
    String service = "";
    String method = "";
    ByteString payload = ByteString.EMPTY;
    long timeout = 0;
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      switch (tag >>> 3) {
        case 1 -> service = in.readStringRequireUtf8();
        case 2 -> method = in.readStringRequireUtf8();
        case 3 -> payload = in.readBytes();
        case 4 -> timeout = in.readInt64();
        default -> in.skipField(tag);
      }
    }
    return new TtrpcRequest(service, method, payload, timeout);
  }
}

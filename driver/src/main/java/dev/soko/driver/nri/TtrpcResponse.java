package dev.soko.driver.nri;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.rpc.Status;
import io.grpc.Status.Code;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * ttrpc's {@code Response} message: {@code status = 1} (google.rpc.Status; absent or code 0 is
 * success) and {@code payload = 2}.
 */
public record TtrpcResponse(Status status, ByteString payload) {

  public static TtrpcResponse ok(ByteString payload) {
    return new TtrpcResponse(Status.getDefaultInstance(), payload);
  }

  public static TtrpcResponse error(Code code, String message) {
    return new TtrpcResponse(
        Status.newBuilder().setCode(code.value()).setMessage(message).build(), ByteString.EMPTY);
  }

  public boolean isOk() {
    return status.getCode() == 0;
  }

  public byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    try {
      if (!status.equals(Status.getDefaultInstance())) {
        out.writeMessage(1, status);
      }
      out.writeBytes(2, payload);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  public static TtrpcResponse decode(byte[] data) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(data);
    Status status = Status.getDefaultInstance();
    ByteString payload = ByteString.EMPTY;
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      switch (tag >>> 3) {
        case 1 -> status = Status.parseFrom(in.readBytes());
        case 2 -> payload = in.readBytes();
        default -> in.skipField(tag);
      }
    }
    return new TtrpcResponse(status, payload);
  }
}

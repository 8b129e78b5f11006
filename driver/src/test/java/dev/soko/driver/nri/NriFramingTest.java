package dev.soko.driver.nri;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status.Code;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class NriFramingTest {

  @Test
  void muxFrameHeaderIsConnectionThenLengthBigEndian() {
    byte[] wire = MuxFrame.encode(MuxFrame.RUNTIME_SERVICE, new byte[] {7, 8, 9});
    assertArrayEquals(new byte[] {0, 0, 0, 2, 0, 0, 0, 3, 7, 8, 9}, wire);
  }

  @Test
  void longStreamsAreCutIntoFramesTheRuntimeCanRead() throws IOException {
    byte[] bytes = new byte[MuxFrame.MAX_WRITTEN * 2 + 5];
    Arrays.fill(bytes, (byte) 42);
    InputStream in = new ByteArrayInputStream(MuxFrame.encode(MuxFrame.PLUGIN_SERVICE, bytes));
    List<Integer> lengths = new ArrayList<>();
    ByteArrayOutputStream joined = new ByteArrayOutputStream();
    for (MuxFrame f = MuxFrame.read(in); f != null; f = MuxFrame.read(in)) {
      assertEquals(MuxFrame.PLUGIN_SERVICE, f.connection());
      lengths.add(f.payload().length);
      joined.writeBytes(f.payload());
    }
    assertEquals(List.of(4096, 4096, 5), lengths);
    assertArrayEquals(bytes, joined.toByteArray());
  }

  @Test
  void framesSplitAcrossReadsAreReassembled() throws IOException {
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    wire.writeBytes(MuxFrame.encode(1, "first".getBytes()));
    wire.writeBytes(MuxFrame.encode(2, "second".getBytes()));
    InputStream trickle = oneByteAtATime(new ByteArrayInputStream(wire.toByteArray()));
    assertEquals(new MuxFrame(1, "first".getBytes()), MuxFrame.read(trickle));
    assertEquals(new MuxFrame(2, "second".getBytes()), MuxFrame.read(trickle));
    assertNull(MuxFrame.read(trickle));
  }

  @Test
  void anOversizeFrameIsRefusedBeforeItsPayloadIsRead() {
    byte[] header = ByteBuffer.allocate(8).putInt(1).putInt(MuxFrame.MAX_READ + 1).array();
    IOException e =
        assertThrows(IOException.class, () -> MuxFrame.read(new ByteArrayInputStream(header)));
    assertTrue(e.getMessage().contains("over"), e.getMessage());
  }

  @Test
  void aLengthWithTheTopBitSetIsRefusedNotReadAsNegative() {
    byte[] header = {0, 0, 0, 1, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff};
    assertThrows(IOException.class, () -> MuxFrame.read(new ByteArrayInputStream(header)));
  }

  @Test
  void aStreamEndingInsideAFrameIsAnError() {
    byte[] cut = Arrays.copyOf(MuxFrame.encode(1, new byte[10]), 12);
    assertThrows(EOFException.class, () -> MuxFrame.read(new ByteArrayInputStream(cut)));
    assertThrows(
        EOFException.class, () -> MuxFrame.read(new ByteArrayInputStream(new byte[] {0, 0})));
  }

  @Test
  void ttrpcHeaderIsLengthStreamTypeFlags() {
    byte[] wire = new TtrpcMessage(3, TtrpcMessage.REQUEST, (byte) 0, new byte[] {5}).encode();
    assertArrayEquals(new byte[] {0, 0, 0, 1, 0, 0, 0, 3, 1, 0, 5}, wire);
  }

  @Test
  void ttrpcMessagesCutAnywhereAreReassembledInOrder() throws IOException {
    TtrpcMessage first = new TtrpcMessage(1, TtrpcMessage.REQUEST, (byte) 0, new byte[5000]);
    TtrpcMessage second = new TtrpcMessage(3, TtrpcMessage.RESPONSE, (byte) 0, "ok".getBytes());
    ByteArrayOutputStream stream = new ByteArrayOutputStream();
    stream.writeBytes(first.encode());
    stream.writeBytes(second.encode());
    byte[] bytes = stream.toByteArray();
    for (int cut : new int[] {1, 4, 9, 10, 11, 4096, 5009, 5010, 5011, bytes.length - 1}) {
      TtrpcDecoder decoder = new TtrpcDecoder();
      List<TtrpcMessage> got = new ArrayList<>(decoder.feed(Arrays.copyOf(bytes, cut)));
      got.addAll(decoder.feed(Arrays.copyOfRange(bytes, cut, bytes.length)));
      assertEquals(List.of(first, second), got, "cut at " + cut);
    }
  }

  @Test
  void ttrpcMessageFedByteByByteComesOutOnce() throws IOException {
    TtrpcMessage message = new TtrpcMessage(7, TtrpcMessage.REQUEST, (byte) 0, "abc".getBytes());
    TtrpcDecoder decoder = new TtrpcDecoder();
    List<TtrpcMessage> got = new ArrayList<>();
    for (byte b : message.encode()) {
      got.addAll(decoder.feed(new byte[] {b}));
    }
    assertEquals(List.of(message), got);
  }

  @Test
  void anOversizeTtrpcMessageIsRefused() {
    byte[] header =
        ByteBuffer.allocate(10).putInt(TtrpcMessage.MAX_DATA + 1).putInt(1).put((byte) 1).array();
    assertThrows(IOException.class, () -> new TtrpcDecoder().feed(header));
  }

  @Test
  void requestAndResponseRoundTrip() throws IOException {
    TtrpcRequest request =
        new TtrpcRequest(
            "nri.pkg.api.v1alpha1.Runtime", "RegisterPlugin", ByteString.copyFromUtf8("p"), 5);
    assertEquals(request, TtrpcRequest.decode(request.encode()));
    TtrpcResponse ok = TtrpcResponse.ok(ByteString.copyFromUtf8("x"));
    assertTrue(TtrpcResponse.decode(ok.encode()).isOk());
    TtrpcResponse error = TtrpcResponse.error(Code.UNIMPLEMENTED, "no such method");
    TtrpcResponse decoded = TtrpcResponse.decode(error.encode());
    assertEquals(12, decoded.status().getCode());
    assertEquals("no such method", decoded.status().getMessage());
  }

  /** The bytes of {@code in}, one per read, as a socket may hand them over. */
  private static InputStream oneByteAtATime(InputStream in) {
    return new FilterInputStream(in) {
      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        return super.read(b, off, Math.min(len, 1));
      }
    };
  }
}

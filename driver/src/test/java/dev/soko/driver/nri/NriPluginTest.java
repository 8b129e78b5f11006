package dev.soko.driver.nri;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import io.containerd.nri.v1alpha1.Nri;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plugin against a runtime played by the test over a real Unix socket, frame by frame as
 * containerd's NRI speaks: registration first, then Configure, Synchronize and StartContainer,
 * whose answer comes only once the container's limits were applied.
 */
class NriPluginTest {
  @TempDir Path dir;

  final List<String> started = new CopyOnWriteArrayList<>();

  @Test
  void registersSubscribesToStartContainerAndAppliesBeforeItAnswers() throws Exception {
    Path socket = dir.resolve("nri.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(socket));
      NriPlugin.ContainerStarts recordOrFail =
          (pod, container) -> {
            if (pod.getUid().equals("broken")) {
              throw new IOException("no cgroup");
            }
            started.add(pod.getUid() + "/" + container.getName());
          };
      try (NriPlugin plugin = new NriPlugin(socket, "soko-io-limits", "50", recordOrFail).start();
          FakeRuntime runtime = new FakeRuntime(server.accept())) {
        TtrpcMessage register = runtime.next(MuxFrame.RUNTIME_SERVICE);
        TtrpcRequest registration = TtrpcRequest.decode(register.data());
        assertThat(registration.service()).isEqualTo("nri.pkg.api.v1alpha1.Runtime");
        assertThat(registration.method()).isEqualTo("RegisterPlugin");
        Nri.RegisterPluginRequest who = Nri.RegisterPluginRequest.parseFrom(registration.payload());
        assertThat(who.getPluginName()).isEqualTo("soko-io-limits");
        assertThat(who.getPluginIdx()).isEqualTo("50");
        runtime.answer(register, Nri.Empty.getDefaultInstance());

        Nri.ConfigureResponse configured =
            Nri.ConfigureResponse.parseFrom(
                runtime.call("Configure", Nri.ConfigureRequest.getDefaultInstance()).payload());
        assertThat(configured.getEvents()).as("StartContainer only").isEqualTo(0x20);

        Nri.SynchronizeResponse sync =
            Nri.SynchronizeResponse.parseFrom(
                runtime
                    .call("Synchronize", Nri.SynchronizeRequest.newBuilder().setMore(false).build())
                    .payload());
        assertThat(sync.getUpdateCount()).isZero();
        assertThat(plugin.synchronizations()).isEqualTo(1);

        TtrpcResponse start = runtime.call("StartContainer", startOf("pod-a", "app"));
        assertThat(start.isOk()).isTrue();
        assertThat(started).as("applied before the answer").containsExactly("pod-a/app");

        assertThat(runtime.call("StartContainer", startOf("broken", "app")).isOk())
            .as("a failure to apply never fails the container's start")
            .isTrue();
        assertThat(runtime.call("UpdateContainer", Nri.Empty.getDefaultInstance()).status())
            .extracting(s -> s.getCode())
            .isEqualTo(12);
      }
    }
  }

  private static Nri.StartContainerRequest startOf(String podUid, String container) {
    return Nri.StartContainerRequest.newBuilder()
        .setPod(Nri.PodSandbox.newBuilder().setUid(podUid).setName("p").setNamespace("ns"))
        .setContainer(Nri.Container.newBuilder().setName(container))
        .build();
  }

  /** The runtime's side of the socket: it calls on connection 1 and answers on connection 2. */
  private static final class FakeRuntime implements AutoCloseable {
    private final SocketChannel channel;
    private final InputStream in;
    private final Map<Integer, TtrpcDecoder> decoders =
        Map.of(
            MuxFrame.PLUGIN_SERVICE,
            new TtrpcDecoder(),
            MuxFrame.RUNTIME_SERVICE,
            new TtrpcDecoder());
    private final Map<Integer, Queue<TtrpcMessage>> received =
        Map.of(
            MuxFrame.PLUGIN_SERVICE,
            new ArrayDeque<>(),
            MuxFrame.RUNTIME_SERVICE,
            new ArrayDeque<>());
    private int nextStream = 1;

    FakeRuntime(SocketChannel channel) {
      this.channel = channel;
      this.in = Channels.newInputStream(channel);
    }

    TtrpcMessage next(int connection) throws IOException {
      while (received.get(connection).isEmpty()) {
        MuxFrame frame = MuxFrame.read(in);
        assertThat(frame).as("the plugin closed the connection").isNotNull();
        assertThat(frame.payload().length).isLessThanOrEqualTo(MuxFrame.MAX_WRITTEN);
        received
            .get(frame.connection())
            .addAll(decoders.get(frame.connection()).feed(frame.payload()));
      }
      return received.get(connection).remove();
    }

    void answer(TtrpcMessage request, Message payload) throws IOException {
      send(
          MuxFrame.RUNTIME_SERVICE,
          new TtrpcMessage(
              request.stream(),
              TtrpcMessage.RESPONSE,
              (byte) 0,
              TtrpcResponse.ok(payload.toByteString()).encode()));
    }

    TtrpcResponse call(String method, Message payload) throws IOException {
      int stream = nextStream;
      nextStream += 2;
      byte[] request =
          new TtrpcRequest("nri.pkg.api.v1alpha1.Plugin", method, payload.toByteString(), 0)
              .encode();
      send(
          MuxFrame.PLUGIN_SERVICE,
          new TtrpcMessage(stream, TtrpcMessage.REQUEST, (byte) 0, request));
      TtrpcMessage response = next(MuxFrame.PLUGIN_SERVICE);
      assertThat(response.stream()).isEqualTo(stream);
      assertThat(response.type()).isEqualTo(TtrpcMessage.RESPONSE);
      return TtrpcResponse.decode(response.data());
    }

    private void send(int connection, TtrpcMessage message) throws IOException {
      ByteBuffer bytes = ByteBuffer.wrap(MuxFrame.encode(connection, message.encode()));
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}

package dev.soko.driver.nri;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.containerd.nri.v1alpha1.Nri;
import io.grpc.Status.Code;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An external NRI plugin: connects to the runtime's NRI socket, registers, subscribes to
 * StartContainer and hands each container about to start to {@link ContainerStarts} before it
 * answers. The runtime calls StartContainer after it has created the container (its cgroup exists,
 * its process waits before the user's program) and before it starts it, and waits for the answer,
 * so what the handler writes into the container's cgroup holds from the container's first
 * instruction. When the socket is absent or the runtime goes, the plugin connects again every
 * {@link #RETRY}; meanwhile containers start without it.
 */
public final class NriPlugin implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NriPlugin.class);

  static final String PLUGIN_SERVICE = "nri.pkg.api.v1alpha1.Plugin";
  static final String RUNTIME_SERVICE = "nri.pkg.api.v1alpha1.Runtime";
  static final Duration RETRY = Duration.ofSeconds(5);

  /** The version of NRI's api.proto this plugin is built from (hack/versions.env). */
  static final String NRI_VERSION = "v0.12.0";

  /** The runtime drops a plugin that has not registered within 5 s (its default). */
  static final Duration REGISTRATION_TIMEOUT = Duration.ofSeconds(5);

  /** The events subscribed to: only StartContainer, whose mask bit is {@code 1 << (6 - 1)}. */
  static final int EVENTS = 1 << (Nri.Event.START_CONTAINER_VALUE - 1);

  /** What the plugin does with a container about to start; it must be quick (see the class). */
  @FunctionalInterface
  public interface ContainerStarts {
    void starting(Nri.PodSandbox pod, Nri.Container container) throws IOException;
  }

  private final Path socket;
  private final String name;
  private final String index;
  private final ContainerStarts starts;
  private final Thread connector;
  private final AtomicInteger synchronizations = new AtomicInteger();
  private volatile NriConnection connection;
  private volatile boolean closing;

  /**
   * @param name the plugin's name, letters, digits and {@code _.+-}
   * @param index two digits; plugins are called in ascending order of it
   */
  public NriPlugin(Path socket, String name, String index, ContainerStarts starts) {
    if (!name.matches("[a-zA-Z0-9_.+-]+") || !index.matches("[0-9]{2}")) {
      throw new IllegalArgumentException("bad NRI plugin name or index: " + name + ", " + index);
    }
    this.socket = socket;
    this.name = name;
    this.index = index;
    this.starts = starts;
    this.connector = new Thread(this::connectWhileOpen, "nri-plugin");
    connector.setDaemon(true);
  }

  /** Starts connecting, in the background; returns at once. */
  public NriPlugin start() {
    connector.start();
    return this;
  }

  /**
   * How many times a runtime has synchronized with this plugin, once per connection: from then on
   * the runtime sends it events.
   */
  public int synchronizations() {
    return synchronizations.get();
  }

  private void connectWhileOpen() {
    boolean warned = false;
    while (!closing) {
      try {
        NriConnection open = NriConnection.open(socket, this::serve);
        connection = open;
        register(open);
        LOG.info("registered with the container runtime's NRI at {} as {}-{}", socket, index, name);
        warned = false;
        Throwable reason = open.closed().join();
        if (!closing) {
          LOG.warn(
              "the NRI connection at {} closed ({}); connecting again", socket, inWords(reason));
        }
      } catch (IOException e) {
        if (!warned) {
          LOG.warn(
              "cannot connect to the container runtime's NRI at {} (trying every {} s; until then"
                  + " IO limits reach a starting container only by the periodic pass): {}",
              socket,
              RETRY.toSeconds(),
              inWords(e));
          warned = true;
        }
      }
      closeConnection();
      sleep(RETRY);
    }
  }

  /** A failure as the log says it: its message, without the exception's class name. */
  private static String inWords(Throwable failure) {
    String message = failure.getMessage();
    return message == null || message.isBlank() ? "no reason given" : message;
  }

  private void register(NriConnection open) throws IOException {
    Nri.RegisterPluginRequest request =
        Nri.RegisterPluginRequest.newBuilder()
            .setPluginName(name)
            .setPluginIdx(index)
            .setNRIVersion(NRI_VERSION)
            .build();
    open.call(RUNTIME_SERVICE, "RegisterPlugin", request.toByteString(), REGISTRATION_TIMEOUT);
  }

  /** Answers one call of the runtime. */
  TtrpcResponse serve(TtrpcRequest request) {
    if (!request.service().equals(PLUGIN_SERVICE)) {
      return TtrpcResponse.error(Code.UNIMPLEMENTED, "no service " + request.service());
    }
    try {
      return switch (request.method()) {
        case "Configure" -> configure(Nri.ConfigureRequest.parseFrom(request.payload()));
        case "Synchronize" -> synchronize(Nri.SynchronizeRequest.parseFrom(request.payload()));
        case "StartContainer" ->
            startContainer(Nri.StartContainerRequest.parseFrom(request.payload()));
        case "Shutdown" -> ok(Nri.Empty.getDefaultInstance());
        default -> TtrpcResponse.error(Code.UNIMPLEMENTED, "no method " + request.method());
      };
    } catch (InvalidProtocolBufferException e) {
      return TtrpcResponse.error(Code.INVALID_ARGUMENT, e.getMessage());
    }
  }

  private TtrpcResponse configure(Nri.ConfigureRequest request) {
    LOG.info(
        "NRI of {} {} (NRI {}): request timeout {} ms",
        request.getRuntimeName(),
        request.getRuntimeVersion(),
        request.getNRIVersion(),
        request.getRequestTimeout());
    return ok(Nri.ConfigureResponse.newBuilder().setEvents(EVENTS).build());
  }

  /**
   * Takes the runtime's pods and containers without changing any: the containers that started while
   * this plugin was away get their limits from the periodic pass.
   */
  private TtrpcResponse synchronize(Nri.SynchronizeRequest request) {
    if (!request.getMore()) {
      synchronizations.incrementAndGet();
    }
    return ok(Nri.SynchronizeResponse.newBuilder().setMore(request.getMore()).build());
  }

  /**
   * Applies before it answers, and answers success even when applying failed: an error would fail
   * the container's start, and the periodic pass tries again. The failure is logged.
   */
  private TtrpcResponse startContainer(Nri.StartContainerRequest request) {
    try {
      starts.starting(request.getPod(), request.getContainer());
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "cannot apply IO limits to container {} of pod {}/{} before it starts: {}",
          request.getContainer().getName(),
          request.getPod().getNamespace(),
          request.getPod().getName(),
          e.toString());
    }
    return ok(Nri.StartContainerResponse.getDefaultInstance());
  }

  private static TtrpcResponse ok(Message message) {
    return TtrpcResponse.ok(ByteString.copyFrom(message.toByteArray()));
  }

  private void closeConnection() {
    NriConnection open = connection;
    if (open != null) {
      open.close();
    }
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    closing = true;
    connector.interrupt();
    closeConnection();
  }
}

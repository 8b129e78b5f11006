package dev.soko.operator.support;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The logs part of a support bundle: streamed to the archive, each at most {@link #MAX_LOG_BYTES}.
 */
final class PodLogs {
  /** Per log; the rest is left out, and the cut recorded. */
  static final long MAX_LOG_BYTES = 128L << 20;

  private final KubernetesClient client;
  private final Duration since;
  private final BundleSink sink;

  PodLogs(KubernetesClient client, Duration since, BundleSink sink) {
    this.client = client;
    this.since = since;
    this.sink = sink;
  }

  /** Every container's log of {@code pod}, and the previous one's of those that restarted. */
  void collect(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    String name = pod.getMetadata().getName();
    Map<String, Integer> restarts = new LinkedHashMap<>();
    if (pod.getStatus() != null) {
      for (List<ContainerStatus> statuses :
          List.of(
              pod.getStatus().getInitContainerStatuses(), pod.getStatus().getContainerStatuses())) {
        for (ContainerStatus s : statuses) {
          restarts.put(s.getName(), s.getRestartCount() == null ? 0 : s.getRestartCount());
        }
      }
    }
    List<Container> containers = new ArrayList<>(pod.getSpec().getInitContainers());
    containers.addAll(pod.getSpec().getContainers());
    int seconds = (int) Math.min(Integer.MAX_VALUE, Math.max(1, since.toSeconds()));
    for (Container c : containers) {
      String base = "logs/" + ns + "/" + name + "/" + c.getName();
      log(base + ".log", () -> stream(ns, name, c.getName(), false, seconds));
      if (restarts.getOrDefault(c.getName(), 0) > 0) {
        log(base + ".previous.log", () -> stream(ns, name, c.getName(), true, seconds));
      }
    }
  }

  /** The container's log of the last {@code seconds}, of its previous run when {@code previous}. */
  private InputStream stream(
      String ns, String pod, String container, boolean previous, int seconds) {
    var logs = client.pods().inNamespace(ns).withName(pod).inContainer(container);
    return (previous ? logs.terminated() : logs).sinceSeconds(seconds).getLogInputStream();
  }

  /**
   * Copies one log into the archive through a temporary file: the archive needs its size before its
   * bytes, and a day of a debug-level driver log is more than the operator's heap.
   */
  private void log(String entry, Supplier<InputStream> open) {
    Path tmp = null;
    try {
      tmp = Files.createTempFile("soko-support-", ".log");
      boolean cut;
      try (InputStream in = open.get();
          OutputStream file = Files.newOutputStream(tmp)) {
        cut = copy(in, file, MAX_LOG_BYTES);
        if (cut) {
          file.write(
              ("\n[cut at " + (MAX_LOG_BYTES >> 20) + " MiB by the support bundle]\n")
                  .getBytes(StandardCharsets.UTF_8));
        }
      }
      sink.addFile(entry, tmp);
      sink.count("log");
      if (cut) {
        sink.failed(entry + ": cut at " + (MAX_LOG_BYTES >> 20) + " MiB");
      }
    } catch (IOException | RuntimeException e) {
      sink.failed(entry + ": " + SupportBundle.message(e));
      sink.add(entry + ".ERROR.txt", SupportBundle.message(e) + "\n");
    } finally {
      if (tmp != null) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException e) {
          // A temporary file left behind costs nothing the bundle needs.
        }
      }
    }
  }

  /** Copies at most {@code max} bytes; true when there was more. */
  static boolean copy(InputStream in, OutputStream out, long max) throws IOException {
    byte[] buffer = new byte[1 << 16];
    long left = max;
    while (left > 0) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (n < 0) {
        return false;
      }
      out.write(buffer, 0, n);
      left -= n;
    }
    return in.read() >= 0;
  }
}

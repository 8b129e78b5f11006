package dev.soko.operator.support;

import dev.soko.driver.cli.PoolSpec;
import dev.soko.driver.config.PoolConfig;
import dev.soko.operator.model.Component;
import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The nodes part of a support bundle: what each node plugin's driver container sees (mounts, loop
 * devices, pool directories), by exec through the API server, each command bounded on its own.
 */
final class NodeViews {
  private static final String POOL_FLAG = "--pool=";

  private final KubernetesClient client;
  private final Duration execTimeout;
  private final ExecutorService executor;
  private final BundleSink sink;

  NodeViews(
      KubernetesClient client, Duration execTimeout, ExecutorService executor, BundleSink sink) {
    this.client = client;
    this.execTimeout = execTimeout;
    this.executor = executor;
    this.sink = sink;
  }

  /** The node plugins' view, one node at a time, each exec bounded by {@link #execTimeout}. */
  void collect(List<Pod> nodePods) {
    Map<String, List<Pod>> byNode = new TreeMap<>();
    for (Pod pod : nodePods) {
      String node = pod.getSpec().getNodeName();
      if (node != null) {
        byNode.computeIfAbsent(node, k -> new ArrayList<>()).add(pod);
      }
    }
    for (var e : byNode.entrySet()) {
      String dir = "nodes/" + e.getKey() + "/";
      StringBuilder errors = new StringBuilder();
      Pod first = e.getValue().get(0);
      nodeFile(dir + "mountinfo", first, errors, "cat", "/proc/self/mountinfo");
      nodeFile(dir + "loop-devices.json", first, errors, "losetup", "--list", "--json");
      StringBuilder pools = new StringBuilder();
      for (Pod pod : e.getValue()) {
        for (Map.Entry<String, String> pool : pools(pod).entrySet()) {
          String path = pool.getValue();
          String where =
              SupportBundle.label(pod, Names.LABEL_CLUSTER)
                  + " pool "
                  + pool.getKey()
                  + " at "
                  + path;
          for (String[] cmd :
              List.of(
                  new String[] {"ls", "-la", path}, new String[] {"du", "-k", "-d", "1", path})) {
            pools.append("### ").append(where).append(": ").append(String.join(" ", cmd));
            pools.append('\n');
            try {
              pools.append(exec(pod, cmd));
            } catch (IOException | RuntimeException ex) {
              String m = failure(pod, cmd, ex);
              pools.append("failed: ").append(m).append('\n');
              errors.append(m).append('\n');
              sink.failed(dir + "pools.txt: " + m);
            }
            pools.append('\n');
          }
        }
      }
      if (!pools.isEmpty()) {
        sink.add(dir + "pools.txt", pools.toString());
      }
      if (!errors.isEmpty()) {
        sink.add(dir + "ERROR.txt", errors.toString());
      } else {
        sink.count("node");
      }
    }
  }

  private void nodeFile(String entry, Pod pod, StringBuilder errors, String... cmd) {
    try {
      sink.add(entry, exec(pod, cmd));
    } catch (IOException | RuntimeException e) {
      String m = failure(pod, cmd, e);
      errors.append(m).append('\n');
      sink.failed(entry + ": " + m);
    }
  }

  private static String failure(Pod pod, String[] cmd, Exception e) {
    return String.join(" ", cmd)
        + " in "
        + SupportBundle.podName(pod)
        + ": "
        + SupportBundle.message(e);
  }

  /**
   * The pools of a node plugin pod: name to path, from its driver container's --pool args, read by
   * the driver's own parser. A value it refuses (a driver of another release) is left out: the
   * bundle then lists no pool directory for it rather than a guessed one.
   */
  static Map<String, String> pools(Pod pod) {
    Map<String, String> pools = new LinkedHashMap<>();
    for (Container c : pod.getSpec().getContainers()) {
      if (!Component.DRIVER.key().equals(c.getName())) {
        continue;
      }
      for (String arg : c.getArgs()) {
        if (!arg.startsWith(POOL_FLAG)) {
          continue;
        }
        try {
          PoolConfig pool = PoolSpec.parse(arg.substring(POOL_FLAG.length()));
          pools.put(pool.name(), pool.path().toString());
        } catch (IllegalArgumentException refused) {
          // Not a pool this release's driver would run: nothing to look at on the node.
        }
      }
    }
    return pools;
  }

  /** Runs a command in the pod's driver container, bounded as a whole by the exec timeout. */
  private String exec(Pod pod, String... cmd) throws IOException {
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    AtomicReference<ExecWatch> opened = new AtomicReference<>();
    try {
      Integer code =
          within(
              execTimeout,
              executor,
              () -> {
                ExecWatch watch =
                    client
                        .pods()
                        .inNamespace(pod.getMetadata().getNamespace())
                        .withName(pod.getMetadata().getName())
                        .inContainer(Component.DRIVER.key())
                        .writingOutput(stdout)
                        .writingError(stderr)
                        .exec(cmd);
                opened.set(watch);
                return watch.exitCode().get();
              });
      if (code == null) {
        throw new IOException("the connection closed without an exit status");
      }
      if (code != 0) {
        throw new IOException(
            "exit code " + code + ": " + stderr.toString(StandardCharsets.UTF_8).strip());
      }
      return stdout.toString(StandardCharsets.UTF_8);
    } finally {
      ExecWatch watch = opened.get();
      if (watch != null) {
        watch.close();
      }
    }
  }

  /**
   * The task's result if it comes within the timeout. The task runs on the executor, so that a step
   * which blocks where no timeout of its own applies (an exec's connection to a kubelet that does
   * not answer, retried by the client) is given up on all the same.
   */
  static <T> T within(Duration timeout, ExecutorService executor, Callable<T> task)
      throws IOException {
    Future<T> result = executor.submit(task);
    try {
      return result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IOException("no answer within " + format(timeout));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      while ((cause instanceof ExecutionException || cause instanceof CompletionException)
          && cause.getCause() != null) {
        cause = cause.getCause();
      }
      if (cause instanceof IOException io) {
        throw io;
      }
      throw new IOException(SupportBundle.message(cause), cause);
    } finally {
      result.cancel(true);
    }
  }

  private static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }
}

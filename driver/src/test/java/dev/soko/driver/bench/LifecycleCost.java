package dev.soko.driver.bench;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a CreateVolume+DeleteVolume pair costs running drivers at steady state, in figures that a
 * loaded machine distorts little: the CPU time (user + system, from {@code /proc/PID/stat}) each
 * driver process spends per pair, at concurrency 1 and 16. Wall-clock latency on a shared machine
 * mostly measures the neighbours. Drivers are measured in turns, round after round, so that they
 * share whatever load there is; the least and the median of the rounds are printed.
 *
 * <p>Usage: {@code LifecycleCost PAIRS ROUNDS NAME=PID=SOCKET...}, the drivers already started. A
 * round runs PAIRS pairs at each concurrency on each driver. With {@code cost.start} set, that
 * command ({@code {pid}}, {@code {name}} and {@code {phase}} replaced) starts before each measured
 * phase, a tracer or recorder that attaches to the driver, and is stopped after it (SIGTERM, on
 * which strace and perf print their summaries), after {@code cost.stop} ran. Figures measured with
 * a tracer attached are not CPU figures.
 */
public final class LifecycleCost {
  private static final int WARMUP_PAIRS = Integer.getInteger("cost.warmup", 2000);
  private static final long TICKS_PER_SECOND = 100; // USER_HZ on Linux
  private static final int[] CONCURRENCY = {1, 16};

  private final String name;
  private final long pid;
  private final CsiClient csi;
  private final Csi.VolumeCapability capability = Requests.mount("ext4");
  private final AtomicInteger sequence = new AtomicInteger();

  private LifecycleCost(String name, long pid, CsiClient csi) {
    this.name = name;
    this.pid = pid;
    this.csi = csi;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: LifecycleCost PAIRS ROUNDS NAME=PID=SOCKET...");
      System.exit(2);
    }
    int pairs = Integer.parseInt(args[0]);
    int rounds = Integer.parseInt(args[1]);
    List<LifecycleCost> drivers = new ArrayList<>();
    for (String spec : Arrays.asList(args).subList(2, args.length)) {
      String[] parts = spec.split("=", 3);
      Path socket = Path.of(parts[2]);
      CsiClient csi = new CsiClient(socket);
      if (!csi.awaitReady(socket, Duration.ofSeconds(60))) {
        throw new IllegalStateException(parts[0] + " did not become ready");
      }
      drivers.add(new LifecycleCost(parts[0], Long.parseLong(parts[1]), csi));
    }
    for (LifecycleCost driver : drivers) {
      driver.run(1, WARMUP_PAIRS);
    }
    Map<String, List<double[]>> results = new LinkedHashMap<>();
    for (int round = 1; round <= rounds; round++) {
      for (LifecycleCost driver : drivers) {
        for (int concurrency : CONCURRENCY) {
          double[] figures = driver.measure(concurrency, pairs);
          String key = driver.name + " c" + concurrency;
          results.computeIfAbsent(key, k -> new ArrayList<>()).add(figures);
          System.out.printf(
              "round %d  %-16s cpu %.3f ms/pair (user %.3f, system %.3f), wall %.3f ms/pair%n",
              round, key, figures[0], figures[1], figures[2], figures[3]);
        }
      }
    }
    System.out.println("least and median of " + rounds + " rounds, CPU ms per pair:");
    results.forEach(
        (key, list) -> {
          double[] cpu = list.stream().mapToDouble(f -> f[0]).sorted().toArray();
          double[] user = list.stream().mapToDouble(f -> f[1]).sorted().toArray();
          double[] system = list.stream().mapToDouble(f -> f[2]).sorted().toArray();
          System.out.printf(
              "%-16s cpu min %.3f median %.3f | user min %.3f median %.3f | system min %.3f"
                  + " median %.3f%n",
              key, cpu[0], median(cpu), user[0], median(user), system[0], median(system));
        });
    for (LifecycleCost driver : drivers) {
      driver.csi.close();
    }
  }

  /** One phase: CPU (total, user, system) and wall time per pair, per thread kind printed. */
  private double[] measure(int concurrency, int pairs) throws Exception {
    String phase = "c" + concurrency;
    Process tracer = hook("cost.start", phase, false);
    Map<String, Long> threadsBefore = threadTicks();
    long[] before = cpuTicks();
    long start = System.nanoTime();
    run(concurrency, pairs);
    double wallMs = (System.nanoTime() - start) / 1e6;
    long[] after = cpuTicks();
    Map<String, Long> threadsAfter = threadTicks();
    hook("cost.stop", phase, true);
    if (tracer != null) {
      tracer.destroy();
      tracer.waitFor(30, TimeUnit.SECONDS);
    }
    if (Boolean.getBoolean("cost.threads")) {
      threadsAfter.forEach(
          (thread, ticks) -> {
            long spent = ticks - threadsBefore.getOrDefault(thread, 0L);
            if (spent > 0) {
              System.out.printf("    %-24s %.3f ms/pair%n", thread, perPair(spent, pairs));
            }
          });
    }
    long user = after[0] - before[0];
    long system = after[1] - before[1];
    return new double[] {
      perPair(user + system, pairs), perPair(user, pairs), perPair(system, pairs), wallMs / pairs
    };
  }

  /** {@code pairs} create+delete pairs spread over {@code concurrency} client threads. */
  private void run(int concurrency, int pairs) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    AtomicInteger left = new AtomicInteger(pairs);
    List<Future<?>> workers = new ArrayList<>();
    for (int w = 0; w < concurrency; w++) {
      workers.add(
          pool.submit(
              () -> {
                while (left.getAndDecrement() > 0) {
                  String volume = name + "-cost-" + sequence.incrementAndGet();
                  String id =
                      csi.controller()
                          .createVolume(Requests.createVolume(volume, 64L << 20, capability))
                          .getVolume()
                          .getVolumeId();
                  csi.controller().deleteVolume(Requests.deleteVolume(id));
                }
                return null;
              }));
    }
    for (Future<?> worker : workers) {
      worker.get();
    }
    pool.shutdown();
  }

  private static double median(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static double perPair(long ticks, int pairs) {
    return ticks * 1000.0 / TICKS_PER_SECOND / pairs;
  }

  /** utime and stime of every thread of the process, in clock ticks. */
  private long[] cpuTicks() throws IOException {
    String[] fields = statFields(Path.of("/proc", Long.toString(pid), "stat"));
    return new long[] {Long.parseLong(fields[11]), Long.parseLong(fields[12])};
  }

  /**
   * utime + stime per thread, summed over threads of one kind (the thread name without its number),
   * so that the RPC threads, the event loop, the JIT and the GC show apart.
   */
  private Map<String, Long> threadTicks() throws IOException {
    Map<String, Long> ticks = new TreeMap<>();
    try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          String kind =
              stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
                  .replaceAll("[-#]?\\d+$", "");
          String[] fields = statFields(task.resolve("stat"));
          ticks.merge(kind, Long.parseLong(fields[11]) + Long.parseLong(fields[12]), Long::sum);
        } catch (IOException gone) {
          // the thread ended while listed
        }
      }
    }
    return ticks;
  }

  /** The fields after the command name, which is in parentheses and may contain spaces. */
  private static String[] statFields(Path stat) throws IOException {
    String text = Files.readString(stat);
    return text.substring(text.lastIndexOf(')') + 2).split(" ");
  }

  private Process hook(String property, String phase, boolean wait) throws Exception {
    String template = System.getProperty(property, "");
    if (template.isBlank()) {
      return null;
    }
    List<String> command = new ArrayList<>();
    for (String word : template.trim().split("\\s+")) {
      command.add(
          word.replace("{pid}", Long.toString(pid))
              .replace("{name}", name)
              .replace("{phase}", phase));
    }
    Process process = new ProcessBuilder(command).inheritIO().start();
    if (wait) {
      process.waitFor(60, TimeUnit.SECONDS);
    } else {
      Thread.sleep(1500); // let a tracer attach before the phase starts
    }
    return process;
  }
}

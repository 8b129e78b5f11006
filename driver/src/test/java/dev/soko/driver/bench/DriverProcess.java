package dev.soko.driver.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A CSI driver started as a child process, with its memory read from /proc. */
final class DriverProcess implements AutoCloseable {
  private final Process process;
  final long startedNanos;

  private DriverProcess(Process process, long startedNanos) {
    this.process = process;
    this.startedNanos = startedNanos;
  }

  static DriverProcess start(List<String> command, Path log) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    long started = System.nanoTime();
    return new DriverProcess(builder.start(), started);
  }

  /** Current resident memory in MiB (VmRSS). */
  double rssMib() throws IOException {
    return statusKib("VmRSS:") / 1024.0;
  }

  /** Peak resident memory in MiB since start (VmHWM). */
  double peakRssMib() throws IOException {
    return statusKib("VmHWM:") / 1024.0;
  }

  private long statusKib(String key) throws IOException {
    for (String line :
        Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
      if (line.startsWith(key)) {
        return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
      }
    }
    throw new IOException(key + " not in /proc/" + process.pid() + "/status");
  }

  /** The driver's process ID (the launcher execs the JVM, so this is the JVM's). */
  long pid() {
    return process.pid();
  }

  boolean alive() {
    return process.isAlive();
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}

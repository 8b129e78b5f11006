package dev.soko.driver.exec;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The real {@link Exec}: {@link ProcessBuilder} with an argument list and a timeout. */
public final class ProcessExec implements Exec {
  private static final Logger LOG = LoggerFactory.getLogger(ProcessExec.class);

  /** Output beyond this is read and discarded, so a chatty tool cannot exhaust the heap. */
  static final int MAX_CAPTURE = 1 << 20;

  @Override
  public ExecResult run(List<String> command, Duration timeout) {
    if (command.isEmpty()) {
      throw new IllegalArgumentException("empty command");
    }
    long start = System.nanoTime();
    Process process;
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(nullFile()));
      // Untranslated messages: callers match a few of them (e.g. "Permission denied").
      builder.environment().put("LC_ALL", "C");
      process = builder.start();
    } catch (IOException e) {
      throw new ExecException("cannot start " + command.get(0) + ": " + e.getMessage(), e);
    }
    // Both pipes are drained on their own threads: a process that fills one pipe while we block
    // on the other would otherwise never finish.
    CompletableFuture<String> out = drain(process.getInputStream());
    CompletableFuture<String> err = drain(process.getErrorStream());
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
        throw new ExecException(
            command.get(0) + " did not finish within " + timeout.toSeconds() + "s");
      }
      ExecResult result =
          new ExecResult(
              List.copyOf(command),
              process.exitValue(),
              out.get(10, TimeUnit.SECONDS),
              err.get(10, TimeUnit.SECONDS));
      LOG.debug(
          "{} exited {} in {} ms",
          command,
          result.exitCode(),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      return result;
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new ExecException("interrupted while running " + command.get(0), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new ExecException("cannot read output of " + command.get(0), e);
    }
  }

  private static java.io.File nullFile() {
    return new java.io.File("/dev/null");
  }

  private static CompletableFuture<String> drain(InputStream stream) {
    CompletableFuture<String> result = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (stream) {
                ByteArrayOutputStream kept = new ByteArrayOutputStream();
                byte[] buffer = new byte[8192];
                int n;
                while ((n = stream.read(buffer)) >= 0) {
                  int room = MAX_CAPTURE - kept.size();
                  if (room > 0) {
                    kept.write(buffer, 0, Math.min(n, room));
                  }
                }
                result.complete(kept.toString(StandardCharsets.UTF_8));
              } catch (IOException e) {
                result.completeExceptionally(e);
              }
            },
            "exec-drain");
    reader.setDaemon(true);
    reader.start();
    return result;
  }
}

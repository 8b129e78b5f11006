package dev.soko.driver.exec;

import java.util.List;

/** What a finished process left behind: its exit code and (size-capped) output. */
public record ExecResult(List<String> command, int exitCode, String stdout, String stderr) {

  public boolean ok() {
    return exitCode == 0;
  }

  /** A one-line description for error messages: the program, its exit code and stderr. */
  public String describe() {
    String err = stderr.strip();
    if (err.isEmpty()) {
      err = stdout.strip();
    }
    if (err.length() > 500) {
      err = err.substring(0, 500) + "...";
    }
    return String.join(" ", command) + " exited " + exitCode + (err.isEmpty() ? "" : ": " + err);
  }
}

package dev.soko.driver.exec;

/**
 * A program could not be started, did not finish in time, or exited non-zero where success was
 * required. It says what happened to the process, not what that means to a CSI client: the layer
 * above decides that (always INTERNAL today, in {@code server/StatusMapper}).
 */
public class ExecException extends RuntimeException {

  public ExecException(String message) {
    super(message);
  }

  public ExecException(String message, Throwable cause) {
    super(message, cause);
  }
}

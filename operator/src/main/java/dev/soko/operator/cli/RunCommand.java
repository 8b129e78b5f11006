package dev.soko.operator.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Runs the operator against a cluster (in-cluster config or a kubeconfig). */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run the operator (not implemented yet in this build).")
public final class RunCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    System.err.println("error: 'run' is not implemented in this build yet");
    return 1;
  }
}

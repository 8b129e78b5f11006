package dev.soko.operator.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code java -jar soko-operator.jar run|render|support-bundle}. */
@Command(
    name = "soko-operator",
    mixinStandardHelpOptions = true,
    description = "Installs and manages the Soko node-local CSI driver.",
    subcommands = {RenderCommand.class, RunCommand.class, SupportBundleCommand.class})
public final class Main implements Runnable {
  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }
}

package dev.soko.driver.exec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A hand-written {@link Exec} for unit tests: records every command and answers from a script of
 * prefix rules (the most recently added matching rule wins; no match means exit 0, no output).
 */
public final class FakeExec implements Exec {

  private record Rule(List<String> prefix, Function<List<String>, ExecResult> answer) {}

  private final List<List<String>> calls = new CopyOnWriteArrayList<>();
  private final List<Rule> rules = new CopyOnWriteArrayList<>();

  /** Answers commands starting with {@code prefix} with a fixed exit code and output. */
  public FakeExec on(List<String> prefix, int exitCode, String stdout, String stderr) {
    return on(prefix, command -> new ExecResult(command, exitCode, stdout, stderr));
  }

  public FakeExec on(List<String> prefix, Function<List<String>, ExecResult> answer) {
    rules.add(0, new Rule(List.copyOf(prefix), answer));
    return this;
  }

  @Override
  public ExecResult run(List<String> command, Duration timeout) {
    calls.add(List.copyOf(command));
    for (Rule rule : rules) {
      if (command.size() >= rule.prefix().size()
          && command.subList(0, rule.prefix().size()).equals(rule.prefix())) {
        return rule.answer().apply(List.copyOf(command));
      }
    }
    return new ExecResult(List.copyOf(command), 0, "", "");
  }

  public List<List<String>> calls() {
    return new ArrayList<>(calls);
  }

  /** The recorded commands of one program, each joined with spaces, for readable assertions. */
  public List<String> callsOf(String program) {
    return calls.stream()
        .filter(c -> c.get(0).equals(program))
        .map(c -> String.join(" ", c))
        .collect(Collectors.toList());
  }
}

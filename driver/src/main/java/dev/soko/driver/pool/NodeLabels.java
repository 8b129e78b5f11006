package dev.soko.driver.pool;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What this driver knows of its own Node's labels, for the pools' node selectors. A watch of the
 * Node keeps it current (report's NodeWatch); without one the labels stay unknown, and a pool with
 * a selector is then not selected. Listeners hear of every change, on the thread that made it.
 */
public final class NodeLabels {
  /**
   * One reading: the labels, or why they are unknown.
   *
   * @param labels null when unknown
   * @param unknownReason empty when the labels are known
   */
  public record State(Map<String, String> labels, String unknownReason) {
    public State {
      labels = labels == null ? null : Map.copyOf(labels);
      Objects.requireNonNull(unknownReason);
    }

    public boolean known() {
      return labels != null;
    }
  }

  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private volatile State state;

  private NodeLabels(State state) {
    this.state = state;
  }

  /** Labels not known yet, for the reason given (until {@link #set} or {@link #unknown}). */
  public static NodeLabels unknownBecause(String reason) {
    return new NodeLabels(new State(null, reason));
  }

  public State state() {
    return state;
  }

  /** The Node's labels as just read; listeners run when they differ from the last reading. */
  public void set(Map<String, String> labels) {
    update(new State(labels, ""));
  }

  /** The labels cannot be known now (the Node is gone, say); listeners run on a change. */
  public void unknown(String reason) {
    update(new State(null, reason));
  }

  public void onChange(Runnable listener) {
    listeners.add(listener);
  }

  private void update(State next) {
    synchronized (this) {
      if (next.equals(state)) {
        return;
      }
      state = next;
    }
    listeners.forEach(Runnable::run);
  }
}

package dev.soko.driver.volume;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@link CrashWorkload} told its client, read back from its log of "begin ..." and "ok ..."
 * lines with their byte offsets, so a test can ask what must and what may survive a crash that
 * happened between two offsets of the log.
 */
final class ClientLog {
  /**
   * One operation: its "begin" line's offset, and the end of its "ok" line (-1: never answered).
   */
  private record Op(String kind, String key, String id, long bytes, long begin, long answered) {
    boolean answeredBy(long offset) {
      return answered >= 0 && answered <= offset;
    }

    boolean startedBefore(long offset) {
      return begin < offset;
    }
  }

  private final List<Op> ops;
  private final long length;

  private ClientLog(List<Op> ops, long length) {
    this.ops = ops;
    this.length = length;
  }

  /** Parses the log; a last line without its newline (cut by a kill) does not count. */
  static ClientLog parse(String text) {
    List<Op> ops = new ArrayList<>();
    String[] open = null;
    long openAt = 0;
    int at = 0;
    for (int end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', at)) {
      String[] f = text.substring(at, end).split(" ");
      if (f[0].equals("begin")) {
        if (open != null) {
          ops.add(op(open, openAt, null, -1)); // killed before it answered
        }
        open = f;
        openAt = at;
      } else {
        ops.add(op(open, openAt, f, end + 1));
        open = null;
      }
      at = end + 1;
    }
    if (open != null) {
      ops.add(op(open, openAt, null, -1));
    }
    return new ClientLog(ops, at);
  }

  private static Op op(String[] begin, long beginAt, String[] ok, long answeredAt) {
    String kind = begin[1];
    String key = begin[2];
    String id = key;
    long bytes = 0;
    if (ok != null) {
      switch (kind) {
        case "create", "snapshot" -> id = ok[3];
        case "expand" -> bytes = Long.parseLong(ok[3]);
        default -> {
          // delete and desnap answer with the ID they were given
        }
      }
    }
    return new Op(kind, key, id, bytes, beginAt, answeredAt);
  }

  /** Expectations for a crash after the whole log was written (a kill of the workload). */
  Expectations atEnd() {
    return between(length, length);
  }

  /**
   * Expectations for a crash somewhere between offsets {@code before} and {@code after} of the log:
   * what was answered by {@code before} must be durable; what began at or after {@code after} must
   * have left no trace; anything in between may have gone either way.
   */
  Expectations between(long before, long after) {
    Expectations e = new Expectations();
    for (Op op : ops) {
      boolean answered = op.answeredBy(before);
      boolean uncertain = op.startedBefore(after) && !answered;
      if (answered) {
        e.acknowledged++;
      } else if (uncertain) {
        e.uncertain++;
      }
      switch (op.kind) {
        case "create" -> settle(answered, uncertain, op, e.volumes);
        case "snapshot" -> settle(answered, uncertain, op, e.snapshots);
        case "delete" -> remove(answered, uncertain, op.id, e.volumes);
        case "desnap" -> remove(answered, uncertain, op.id, e.snapshots);
        case "expand" -> {
          if (answered) {
            e.minimumCapacity.merge(op.id, op.bytes, Math::max);
          }
        }
        default -> throw new IllegalStateException("unknown operation " + op.kind);
      }
    }
    return e;
  }

  private static void settle(boolean answered, boolean uncertain, Op op, Objects objects) {
    if (answered) {
      objects.required.add(op.id);
      objects.allowedIds.add(op.id);
    } else if (uncertain) {
      objects.allowedNames.add(op.key);
    }
  }

  private static void remove(boolean answered, boolean uncertain, String id, Objects objects) {
    if (answered || uncertain) {
      objects.required.remove(id);
    }
    if (answered) {
      objects.allowedIds.remove(id);
    }
  }

  /**
   * Volumes or snapshots: which must exist, and which may (by ID, or by name if never answered).
   */
  static final class Objects {
    final Set<String> required = new HashSet<>();
    final Set<String> allowedIds = new HashSet<>();
    final Set<String> allowedNames = new HashSet<>();

    boolean allowed(String id, String name) {
      return allowedIds.contains(id) || allowedNames.contains(name);
    }
  }

  static final class Expectations {
    final Objects volumes = new Objects();
    final Objects snapshots = new Objects();
    final Map<String, Long> minimumCapacity = new HashMap<>();
    int acknowledged;
    int uncertain;
  }
}

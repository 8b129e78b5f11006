package dev.soko.driver.volume;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@link CrashWorkload} told its client, read back from its log of "begin ..." and "ok ..."
 * lines (and the "adopt NAME ID" lines of a restart) with their byte offsets, so a test can ask
 * what must and what may survive a crash that happened between two offsets of the log. A group
 * snapshot's lines are "begin group NAME VOL,VOL" and "ok group NAME GROUP SNAP,SNAP"; its members
 * are named GROUP/VOL, as the engine names them.
 */
final class ClientLog {
  /**
   * One operation: its "begin" line's offset, and the end of its "ok" line (-1: never answered).
   * {@code source} is what a create or snapshot copies: "-" (nothing), "snap:ID" or "vol:ID"; for a
   * group snapshot, its volumes. {@code members} are an answered group snapshot's snapshots.
   */
  private record Op(
      String kind,
      String key,
      String id,
      String source,
      List<String> members,
      long bytes,
      long begin,
      long answered) {
    boolean answeredBy(long offset) {
      return answered >= 0 && answered <= offset;
    }

    boolean startedBefore(long offset) {
      return begin < offset;
    }
  }

  private final List<Op> ops;
  private final long length;
  private final Map<String, String> origins = new HashMap<>();
  // By volume ID: a member of a group whose answer a kill cut off is known only by GROUP/VOL.
  private final Map<String, String> volumeOrigins = new HashMap<>();
  private final Map<String, List<String>> groupMembers = new HashMap<>();
  // Blank creates never answered: a kill may have come before the content was written, and a
  // later run may still have copied the volume (see "adopt").
  private final Set<String> neverWritten = new HashSet<>();

  private ClientLog(List<Op> ops, long length) {
    this.ops = ops;
    this.length = length;
    traceOrigins();
  }

  /**
   * Names each volume's and snapshot's origin: the blank volume whose content it holds (see {@link
   * CrashWorkload#content}). Content never changes after a create, so the lineage decides it.
   */
  private void traceOrigins() {
    Map<String, String> nameById = new HashMap<>();
    for (Op op : ops) {
      if (op.kind.equals("adopt")) {
        nameById.put(op.id, op.key);
        if (op.key.startsWith("group-") && op.key.contains("/")) {
          // A member of a group whose answer a kill cut off: only the engine named it.
          String volume = op.key.substring(op.key.indexOf('/') + 1);
          origins.putIfAbsent(op.key, volumeOrigins.get(volume));
        }
        String origin = origins.get(op.key);
        if (op.id.startsWith("vol-") && origin != null) {
          volumeOrigins.put(op.id, origin);
        }
        continue;
      }
      if (op.kind.equals("group")) {
        for (int i = 0; i < op.members.size(); i++) {
          String volume = op.source.split(",")[i];
          String member = op.id + "/" + volume;
          origins.put(member, volumeOrigins.get(volume));
          nameById.put(op.members.get(i), member);
        }
        groupMembers.put(op.id, op.members);
        continue;
      }
      if (!op.kind.equals("create") && !op.kind.equals("snapshot")) {
        continue;
      }
      String origin =
          op.source.equals("-")
              ? op.key
              : origins.get(nameById.get(op.source.substring(op.source.indexOf(':') + 1)));
      origins.put(op.key, origin);
      if (op.answered >= 0) {
        nameById.put(op.id, op.key);
        if (op.kind.equals("create")) {
          volumeOrigins.put(op.id, origin);
        }
      } else if (op.source.equals("-")) {
        neverWritten.add(op.key);
      }
    }
  }

  /** Parses the log; a last line without its newline (cut by a kill) does not count. */
  static ClientLog parse(String text) {
    List<Op> ops = new ArrayList<>();
    String[] open = null;
    long openAt = 0;
    int at = 0;
    for (int end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', at)) {
      String[] f = text.substring(at, end).split(" ");
      if (f[0].equals("begin") || f[0].equals("adopt")) {
        if (open != null) {
          ops.add(op(open, openAt, null, -1)); // killed before it answered
          open = null;
        }
        if (f[0].equals("adopt")) {
          ops.add(new Op("adopt", f[1], f[2], "-", List.of(), 0, at, end + 1));
        } else {
          open = f;
          openAt = at;
        }
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
    String source =
        switch (kind) {
          case "create", "group" -> begin[3];
          case "snapshot" -> "vol:" + begin[3];
          default -> "-";
        };
    long bytes = 0;
    List<String> members = List.of();
    if (ok != null) {
      switch (kind) {
        case "create", "snapshot" -> id = ok[3];
        case "group" -> {
          id = ok[3];
          members = List.of(ok[4].split(","));
        }
        case "expand" -> bytes = Long.parseLong(ok[3]);
        default -> {
          // delete, desnap and degroup answer with the ID they were given
        }
      }
    }
    return new Op(kind, key, id, source, members, bytes, beginAt, answeredAt);
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
    Expectations e = new Expectations(origins, volumeOrigins, neverWritten);
    for (Op op : ops) {
      if (op.kind.equals("adopt")) {
        continue; // a restart naming what it found, not an operation
      }
      boolean answered = op.answeredBy(before);
      boolean uncertain = op.startedBefore(after) && !answered;
      if (uncertain && op.kind.equals("create") && op.source.equals("-")) {
        e.unwrittenAtCut.add(op.key);
      }
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
        case "group" -> {
          settle(answered, uncertain, op, e.groups);
          for (String member : op.members) {
            settle(answered, uncertain, op, member, e.snapshots);
          }
        }
        case "degroup" -> {
          remove(answered, uncertain, op.id, e.groups);
          for (String member : groupMembers.getOrDefault(op.id, List.of())) {
            remove(answered, uncertain, member, e.snapshots);
          }
        }
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
    settle(answered, uncertain, op, op.id, objects);
  }

  /** An object {@code op} made: {@code id} once answered, else allowed by the op's name. */
  private static void settle(
      boolean answered, boolean uncertain, Op op, String id, Objects objects) {
    if (answered) {
      objects.required.add(id);
      objects.allowedIds.add(id);
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
    final Objects groups = new Objects();
    final Map<String, Long> minimumCapacity = new HashMap<>();
    private final Set<String> unwrittenAtCut = new HashSet<>();
    private final Map<String, String> origins;
    private final Map<String, String> volumeOrigins;
    private final Set<String> neverWritten;
    int acknowledged;
    int uncertain;

    private Expectations(
        Map<String, String> origins, Map<String, String> volumeOrigins, Set<String> neverWritten) {
      this.origins = origins;
      this.volumeOrigins = volumeOrigins;
      this.neverWritten = neverWritten;
    }

    /**
     * Whether the volume or snapshot named {@code name} may hold zeros instead of its origin's
     * content: its origin is a blank create in flight at the cut, or one that was never answered.
     */
    boolean mayBeUnwritten(String name) {
      return unwrittenAtCut.contains(name) || neverWritten.contains(origin(name));
    }

    /**
     * The blank volume whose content the volume or snapshot named {@code name} must hold; for a
     * group snapshot's member (GROUP/VOL), its volume's.
     */
    String origin(String name) {
      String origin = origins.get(name);
      if (origin == null && name.startsWith("group-") && name.contains("/")) {
        origin = volumeOrigins.get(name.substring(name.indexOf('/') + 1));
      }
      if (origin == null) {
        throw new IllegalArgumentException("no operation created " + name);
      }
      return origin;
    }
  }
}

package dev.soko.driver.sys;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A hand-written {@link Syscalls} that records each call as one line ({@code "mount /dev/loop1 /k/s
 * ext4 0x400 -"}, {@code "ioctl loop3 0x4c0a"}) and fails the ones it was told to. Descriptors are
 * numbered from 10 and remembered by path, so an ioctl line names the file it acts on.
 */
public final class FakeSyscalls implements Syscalls {
  private final List<String> calls = new ArrayList<>();
  private final Map<String, Deque<Integer>> failures = new HashMap<>();
  private final Map<Integer, String> open = new HashMap<>();
  private final Deque<Integer> freeLoops = new ArrayDeque<>();
  private final List<byte[]> structs = new ArrayList<>();
  private final Map<String, byte[]> filled = new HashMap<>();
  private StatVfs statVfs = new StatVfs(4096, 0, 0, 0, 0, 0);
  private final Map<String, Long> filesystemTypes = new HashMap<>();
  private final Set<String> heldOpen = new HashSet<>();
  private int nextFd = 10;

  /** The next call whose line starts with {@code prefix} fails with {@code errno} (queued). */
  public FakeSyscalls failOn(String prefix, int errno) {
    failures.computeIfAbsent(prefix, k -> new ArrayDeque<>()).add(errno);
    return this;
  }

  /**
   * What the kernel writes into the structure of an ioctl whose line starts with {@code prefix}
   * (LOOP_GET_STATUS64's loop_info64, say); others are left as they were passed.
   */
  public FakeSyscalls fill(String prefix, byte[] answer) {
    filled.put(prefix, answer.clone());
    return this;
  }

  /** What successive LOOP_CTL_GET_FREE calls answer (default 0). */
  public FakeSyscalls freeLoops(Integer... numbers) {
    freeLoops.addAll(List.of(numbers));
    return this;
  }

  public FakeSyscalls statVfs(StatVfs answer) {
    statVfs = answer;
    return this;
  }

  /** What statfs says the filesystem holding {@code path} is (default: ext4's magic). */
  public FakeSyscalls filesystemType(String path, long magic) {
    filesystemTypes.put(path, magic);
    return this;
  }

  /**
   * Something else holds {@code path} open (a loop device, say): a write lease on it is refused
   * with EAGAIN, as the kernel refuses it.
   */
  public FakeSyscalls heldOpen(String path) {
    heldOpen.add(path);
    return this;
  }

  public List<String> calls() {
    return calls;
  }

  /** The structures passed to ioctls, in call order. */
  public List<byte[]> structs() {
    return structs;
  }

  /** Descriptors opened and not closed, by path: a leak shows here. */
  public Map<Integer, String> openFiles() {
    return open;
  }

  private void record(String line) {
    calls.add(line);
    for (Map.Entry<String, Deque<Integer>> f : failures.entrySet()) {
      if (line.startsWith(f.getKey()) && !f.getValue().isEmpty()) {
        throw new SyscallException(line, f.getValue().poll());
      }
    }
  }

  @Override
  public void mount(String source, String target, String fsType, long flags, String data) {
    record(
        String.join(
            " ",
            "mount",
            source,
            target,
            fsType == null ? "-" : fsType,
            "0x" + Long.toHexString(flags),
            data == null ? "-" : data));
  }

  @Override
  public void umount2(String target, int flags) {
    record("umount2 " + target + " " + flags);
  }

  @Override
  public int open(String path, int flags) {
    record("open " + path + " " + flags);
    int fd = nextFd++;
    open.put(fd, path);
    return fd;
  }

  @Override
  public void close(int fd) {
    if (open.remove(fd) == null) {
      throw new AssertionError("close of a descriptor that is not open: " + fd);
    }
  }

  @Override
  public int ioctl(int fd, long request, long argument) {
    record("ioctl " + name(fd) + " 0x" + Long.toHexString(request) + " " + argument);
    if (request == 0x4C82) {
      return freeLoops.isEmpty() ? 0 : freeLoops.poll();
    }
    return 0;
  }

  @Override
  public int ioctl(int fd, long request, byte[] struct) {
    structs.add(struct.clone());
    String line = "ioctl " + name(fd) + " 0x" + Long.toHexString(request) + " struct";
    record(line);
    filled.forEach(
        (prefix, answer) -> {
          if (line.startsWith(prefix)) {
            System.arraycopy(answer, 0, struct, 0, Math.min(answer.length, struct.length));
          }
        });
    return 0;
  }

  @Override
  public int fcntl(int fd, int command, long argument) {
    String line = "fcntl " + name(fd) + " " + command + " " + argument;
    record(line);
    boolean writeLease = command == 1024 && argument == 1; // F_SETLEASE, F_WRLCK
    if (writeLease && heldOpen.contains(open.get(fd))) {
      throw new SyscallException(line, Errno.EAGAIN);
    }
    return 0;
  }

  @Override
  public StatVfs statvfs(String path) {
    record("statvfs " + path);
    return statVfs;
  }

  @Override
  public long filesystemType(String path) {
    record("statfs " + path);
    return filesystemTypes.getOrDefault(path, 0xEF53L);
  }

  @Override
  public void syncfs(int fd) {
    record("syncfs " + name(fd));
  }

  private String name(int fd) {
    String path = open.get(fd);
    if (path == null) {
      throw new AssertionError("ioctl on a descriptor that is not open: " + fd);
    }
    return path.substring(path.lastIndexOf('/') + 1);
  }
}

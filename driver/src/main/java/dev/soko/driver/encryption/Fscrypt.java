package dev.soko.driver.encryption;

import dev.soko.driver.sys.Errno;
import dev.soko.driver.sys.SyscallException;
import dev.soko.driver.sys.Syscalls;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;

/**
 * The kernel's filesystem encryption (fscrypt, v2 policies) on a mounted filesystem: its keyring (a
 * key is added to and removed from the filesystem, not a process) and a directory's policy. One
 * method per ioctl.
 */
final class Fscrypt {
  /** FSCRYPT_KEY_REMOVAL_STATUS_FLAG_FILES_BUSY: removed, but files still open keep it in use. */
  static final int FILES_BUSY = 0x1;

  private static final int O_RDONLY = 0;

  private final Syscalls syscalls;

  Fscrypt(Syscalls syscalls) {
    this.syscalls = syscalls;
  }

  /** Adds {@code key} to the keyring of the filesystem holding {@code path}; its identifier. */
  KeyIdentifier addKey(Path path, EncryptionKey key) {
    byte[] args = key.withRaw(FscryptArgs::addKey);
    try {
      onFile(path, fd -> syscalls.ioctl(fd, FscryptArgs.IOC_ADD_KEY, args));
      return new KeyIdentifier(FscryptArgs.addedIdentifier(args));
    } finally {
      Arrays.fill(args, (byte) 0);
    }
  }

  /**
   * Removes the key named {@code identifier} from the keyring of the filesystem holding {@code
   * path}; the kernel's removal status flags ({@link #FILES_BUSY}).
   */
  int removeKey(Path path, KeyIdentifier identifier) {
    byte[] args = FscryptArgs.removeKey(identifier.bytes());
    onFile(path, fd -> syscalls.ioctl(fd, FscryptArgs.IOC_REMOVE_KEY, args));
    return FscryptArgs.removalStatus(args);
  }

  /** The identifier of the key of {@code directory}'s v2 policy; empty when it has no policy. */
  Optional<KeyIdentifier> policyKey(Path directory) {
    byte[] args = FscryptArgs.getPolicyEx();
    try {
      onFile(directory, fd -> syscalls.ioctl(fd, FscryptArgs.IOC_GET_POLICY_EX, args));
    } catch (SyscallException e) {
      if (e.errno() == Errno.ENODATA) {
        return Optional.empty();
      }
      throw e;
    }
    byte[] policy = FscryptArgs.policyIn(args);
    if (FscryptArgs.version(policy) != FscryptArgs.POLICY_V2) {
      throw new IllegalStateException(
          directory + " has an fscrypt policy of version " + FscryptArgs.version(policy));
    }
    return Optional.of(new KeyIdentifier(FscryptArgs.identifierOf(policy)));
  }

  /** Sets a v2 policy with the key named {@code identifier} on the empty {@code directory}. */
  void setPolicy(Path directory, KeyIdentifier identifier) {
    byte[] policy = FscryptArgs.policyV2(identifier.bytes());
    onFile(directory, fd -> syscalls.ioctl(fd, FscryptArgs.IOC_SET_POLICY, policy));
  }

  @FunctionalInterface
  private interface FdCall {
    int on(int fd);
  }

  private void onFile(Path path, FdCall call) {
    int fd = syscalls.open(path.toString(), O_RDONLY);
    try {
      call.on(fd);
    } finally {
      syscalls.close(fd);
    }
  }
}

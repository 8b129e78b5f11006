package dev.soko.driver.transfer;

import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import java.time.Duration;
import java.util.Set;

/**
 * How often a copy whose stream was cut goes on, and after what pause: a connection reset, a source
 * driver restarted or a stream that stalled are worth another stream from where the copy stands;
 * the source's own answers (the snapshot gone, a refusal, a bad request) are not. The pauses double
 * from {@code firstPause}, so {@code max} resumes span about {@code 2^max} pauses: long enough for
 * a connection to be made again, short enough that a node gone for good fails the caller's
 * CreateVolume while its provisioner still waits for the answer.
 *
 * @param max how many times one copy resumes before its failure is the caller's
 * @param firstPause the pause before the first resume
 */
record Resumes(int max, Duration firstPause) {
  /** Four resumes after 1, 2, 4 and 8 s. */
  static final Resumes DEFAULT = new Resumes(4, Duration.ofSeconds(1));

  /** Codes of a stream cut on the way, not of an answer of the source. */
  private static final Set<Status.Code> CUTS =
      Set.of(
          Status.Code.UNAVAILABLE,
          Status.Code.CANCELLED,
          Status.Code.DEADLINE_EXCEEDED,
          Status.Code.ABORTED,
          Status.Code.UNKNOWN);

  /** Whether a stream that ended with {@code status} is worth another. */
  static boolean isCut(Status status) {
    return CUTS.contains(status.getCode());
  }

  /** Waits before resume number {@code resume} (1 for the first). */
  void pause(int resume, String what) {
    long millis = firstPause.toMillis() << Math.min(resume - 1, 16);
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(
          StorageException.Reason.ABORTED, what + ": interrupted while waiting to resume");
    }
  }
}

package dev.soko.driver.transfer;

import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.StorageException.Reason;
import io.grpc.Status;

/**
 * What a failed call to another node's data port means to this node's caller, said with the node
 * and endpoint: a node that cannot be reached or a stream cut midway is UNAVAILABLE (the caller may
 * try again); so is a node that refuses for want of resources (its limit of reads at once, room for
 * a volume's read copy), said as its own words: the caller's RESOURCE_EXHAUSTED would tell a
 * provisioner that this node, not the source's, is full; a certificate the port refuses is
 * FAILED_PRECONDITION (a configuration to fix); the port's own answers keep their code.
 */
final class RemoteFailures {
  private RemoteFailures() {}

  static StorageException of(Status status, String what, String node, String endpoint) {
    String where = "node " + node + " at " + endpoint;
    String said =
        status.getDescription() == null ? status.getCode().name() : status.getDescription();
    return switch (status.getCode()) {
      case RESOURCE_EXHAUSTED ->
          new StorageException(
              Reason.UNAVAILABLE, what + ": " + where + " cannot serve it now: " + said);
      case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED, UNKNOWN ->
          new StorageException(
              Reason.UNAVAILABLE,
              what + ": " + where + " cannot be reached or stopped answering (" + said + ")");
      case PERMISSION_DENIED, UNAUTHENTICATED ->
          StorageException.precondition(
              "%s: %s refused this node's certificate (%s)", what, where, said);
      case NOT_FOUND -> StorageException.notFound("%s: %s answers: %s", what, where, said);
      default ->
          new StorageException(reason(status.getCode()), what + ": " + where + " answers: " + said);
    };
  }

  private static Reason reason(Status.Code code) {
    for (Reason reason : Reason.values()) {
      if (reason.name().equals(code.name())) {
        return reason;
      }
    }
    return Reason.INTERNAL;
  }
}

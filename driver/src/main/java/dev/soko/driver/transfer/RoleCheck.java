package dev.soko.driver.transfer;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Lets a call through only when the caller's certificate names a role that may call its method. TLS
 * has already verified the chain against the CA (client authentication is required); this checks
 * what the certificate says the caller is. A method not in the table is refused to every role: the
 * port has no unauthenticated or unlisted method.
 */
final class RoleCheck implements ServerInterceptor {
  private final Map<String, Set<String>> rolesByMethod;

  /**
   * @param rolesByMethod the roles that may call each method, by its full name
   */
  RoleCheck(Map<String, Set<String>> rolesByMethod) {
    this.rolesByMethod = Map.copyOf(rolesByMethod);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    Optional<String> role = Roles.ofPeer(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
    if (role.isEmpty()) {
      throw Status.UNAUTHENTICATED
          .withDescription("the data port serves only callers with a client certificate")
          .asRuntimeException();
    }
    Set<String> allowed = rolesByMethod.getOrDefault(method, Set.of());
    if (!allowed.contains(role.get())) {
      throw Status.PERMISSION_DENIED
          .withDescription(
              "a certificate of CN '"
                  + printable(role.get())
                  + "' may not call "
                  + method
                  + "; allowed roles: "
                  + new TreeSet<>(allowed))
          .asRuntimeException();
    }
    return next.startCall(call, headers);
  }

  /** A CN from a certificate, safe to echo: short and without control characters. */
  private static String printable(String cn) {
    String cut = cn.length() > 64 ? cn.substring(0, 64) + "..." : cn;
    return cut.replaceAll("\\p{Cntrl}", "?");
  }
}

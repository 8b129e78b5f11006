package dev.soko.operator.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The API server's audit log (JSON lines, level Metadata), filtered to one user: the honest count
 * of what a client asked the server, whatever the client's own metrics say. A request is counted
 * once: at ResponseComplete, or for a watch at ResponseStarted (when it opened) unless the server
 * refused it.
 */
public final class AuditLog {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Path file;
  private final String user;

  /** One request: what, on which resource, when it was received. */
  public record Request(
      Instant received, String verb, String resource, String subresource, String uri, int code) {
    public boolean isWrite() {
      return switch (verb) {
        case "create", "update", "patch", "delete", "deletecollection" -> true;
        default -> false;
      };
    }

    public boolean isLease() {
      return "leases".equals(resource);
    }
  }

  AuditLog(Path file, String user) {
    this.file = file;
    this.user = user;
  }

  /** Every request of the user received in [from, to). */
  public List<Request> between(Instant from, Instant to) throws IOException {
    return matching(r -> !r.received().isBefore(from) && r.received().isBefore(to));
  }

  public List<Request> matching(Predicate<Request> filter) throws IOException {
    List<Request> out = new ArrayList<>();
    if (!Files.exists(file)) {
      return out;
    }
    try (BufferedReader in = Files.newBufferedReader(file)) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode e = JSON.readTree(line);
        String stage = e.path("stage").asText();
        String verb = e.path("verb").asText();
        int code = e.path("responseStatus").path("code").asInt(0);
        // A watch is counted when its stream starts; one refused outright (e.g. 410) never
        // starts, so it is counted when it completes.
        boolean counted =
            "watch".equals(verb)
                ? "ResponseStarted".equals(stage)
                    || ("ResponseComplete".equals(stage) && code >= 400)
                : "ResponseComplete".equals(stage);
        if (!counted || !user.equals(e.path("user").path("username").asText())) {
          continue;
        }
        Request r =
            new Request(
                Instant.parse(e.path("requestReceivedTimestamp").asText()),
                verb,
                e.path("objectRef").path("resource").asText(null),
                e.path("objectRef").path("subresource").asText(null),
                e.path("requestURI").asText(),
                code);
        if (filter.test(r)) {
          out.add(r);
        }
      }
    }
    return out;
  }
}

package dev.soko.driver.handoff;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/** Where NodeRequests live and what they are called: shared by both sides of the path. */
public final class NodeRequests {
  static final String API_VERSION = "soko.dev/v1alpha1";
  static final String KIND = "NodeRequest";
  static final String LABEL_NODE = "soko.dev/node";
  static final String APPLY = "application/apply-patch+yaml";
  static final String CONTROLLER_MANAGER = "soko-controller";
  static final String NODE_MANAGER = "soko-driver";
  static final String APPLIED = "Applied";
  static final String REFUSED = "Refused";
  static final String FAILED = "Failed";
  static final String REASON = "reason";
  static final int MAX_OBJECT_CHARS = 1 << 20;

  private NodeRequests() {}

  /** The collection's path in {@code namespace}. */
  static String collection(String namespace) {
    return "/apis/" + API_VERSION + "/namespaces/" + namespace + "/noderequests";
  }

  /**
   * {@code <operation>-<hash>}: a volume id may hold any character and up to 128 of them, an object
   * name may not, so the name carries 128 bits of the id's SHA-256 (the id itself is in the spec).
   * One request per operation and volume: a new call for the same volume replaces the spec.
   */
  static String name(String operation, String volumeId) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(volumeId.getBytes(StandardCharsets.UTF_8));
      return operation.toLowerCase(Locale.ROOT) + "-" + HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}

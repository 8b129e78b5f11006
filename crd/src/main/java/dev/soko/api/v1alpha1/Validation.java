package dev.soko.api.v1alpha1;

/**
 * Regular expressions shared by CEL rules and schema patterns, so messages and patterns stay in one
 * place. CEL here uses only what Kubernetes 1.28 (the oldest row of the versions table) offers to
 * CRDs: no quantity library, so quantities are checked by their shape.
 */
public final class Validation {
  /** A Kubernetes quantity in bytes, such as 500Gi, 1Ti or 1073741824. */
  public static final String QUANTITY_RULE =
      "self.matches('^[0-9]+(\\\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$')";

  public static final String QUANTITY_MESSAGE =
      "must be a quantity of bytes such as 500Gi, 1Ti or 1073741824";

  /** A byte quantity whose digits are all zero (0, 0.0, 0Gi): "nothing", never "all the space". */
  public static final String ZERO_QUANTITY_RULE = "!self.matches('^0+(\\\\.0+)?[A-Za-z]*$')";

  /**
   * A non-negative Kubernetes quantity (resource.Quantity's grammar without a sign), for string
   * values of container resources; written without backslashes so that it can sit in JSON.
   */
  public static final String RESOURCE_QUANTITY_PATTERN =
      "^[+]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))))?$";

  /** A DNS-1123 label: lower case letters, digits and '-', starting and ending alphanumeric. */
  public static final String DNS_LABEL_RULE = "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')";

  /** A DNS-1123 subdomain: labels separated by dots (escaped for a CEL string literal). */
  static final String DNS_SUBDOMAIN =
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

  public static final String DNS_SUBDOMAIN_RULE = "self.matches('" + DNS_SUBDOMAIN + "')";

  /**
   * An absolute, clean path: no '//', no '.' or '..' segment, no trailing '/' (except '/'). The
   * driver and the kubelet compare paths as strings, so two spellings of one directory must not
   * both be accepted.
   */
  public static final String CLEAN_PATH_RULE =
      "(self == '/' || self.matches('^(/[^/]+)+$') && !self.matches('(^|/)\\\\.\\\\.?(/|$)'))";

  public static final String CLEAN_PATH_MESSAGE =
      "must be an absolute clean path: starting with '/', without '//', '.' or '..' segments or a"
          + " trailing '/'";

  /**
   * An image reference as the container runtime parses it: [host[:port]/]path[:tag][@digest], path
   * components lower case. A bad one is accepted in a pod and fails at pull time.
   */
  public static final String IMAGE_RULE =
      "self.matches('^([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\\\\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*(:[0-9]+)?/)?"
          + "[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*"
          + "(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$')";

  public static final String IMAGE_MESSAGE =
      "must be an image reference such as registry.example:5000/sig-storage/csi-resizer:v1.14.0";

  /** A label (or annotation) key: an optional DNS-subdomain prefix and '/', then a name. */
  static final String LABEL_KEY =
      "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
          + "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";

  /** A label value: empty, or up to 63 alphanumerics, '-', '_', '.', alphanumeric at both ends. */
  static final String LABEL_VALUE = "^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$";

  private Validation() {}
}

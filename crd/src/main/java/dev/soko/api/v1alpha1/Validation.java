package dev.soko.api.v1alpha1;

/** Regular expressions shared by CEL rules, so messages and patterns stay in one place. */
public final class Validation {
  /** A Kubernetes quantity in bytes, such as 500Gi, 1Ti or 1073741824. */
  public static final String QUANTITY_RULE =
      "self.matches('^[0-9]+(\\\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$')";

  public static final String QUANTITY_MESSAGE =
      "must be a quantity of bytes such as 500Gi, 1Ti or 1073741824";

  /** A DNS-1123 label: lower case letters, digits and '-', starting and ending alphanumeric. */
  public static final String DNS_LABEL_RULE = "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')";

  /** A DNS-1123 subdomain: labels separated by dots. */
  public static final String DNS_SUBDOMAIN_RULE =
      "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')";

  public static final String ABSOLUTE_PATH_RULE =
      "self.startsWith('/') && !self.contains('/../') && !self.endsWith('/..')";

  private Validation() {}
}

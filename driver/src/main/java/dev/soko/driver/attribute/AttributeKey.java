package dev.soko.driver.attribute;

/** One key an attribute kind owns, and where it is given. */
public record AttributeKey(String name, AttributeSource source) {
  public static AttributeKey classParameter(String name) {
    return new AttributeKey(name, AttributeSource.CLASS_PARAMETERS);
  }

  public static AttributeKey mutableParameter(String name) {
    return new AttributeKey(name, AttributeSource.MUTABLE_PARAMETERS);
  }
}

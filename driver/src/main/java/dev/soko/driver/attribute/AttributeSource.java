package dev.soko.driver.attribute;

/** Where an attribute's key is given, which decides whether it can change after creation. */
public enum AttributeSource {
  /** A StorageClass parameter: given at CreateVolume and fixed for the volume's life. */
  CLASS_PARAMETERS(false, "StorageClass"),
  /**
   * A VolumeAttributesClass's mutable parameter: given at CreateVolume and replaced, as a whole, by
   * every ModifyVolume.
   */
  MUTABLE_PARAMETERS(true, "mutable");

  private final boolean mutable;
  private final String shown;

  AttributeSource(boolean mutable, String shown) {
    this.mutable = mutable;
    this.shown = shown;
  }

  /** Whether ModifyVolume may change a key of this source. */
  public boolean mutable() {
    return mutable;
  }

  /** How messages name a parameter of this source ("unknown mutable parameter …"). */
  String shown() {
    return shown;
  }
}

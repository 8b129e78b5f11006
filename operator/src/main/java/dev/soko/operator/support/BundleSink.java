package dev.soko.operator.support;

import java.io.IOException;
import java.nio.file.Path;

/** Where the parts of a support bundle put their entries, and what they could not collect. */
interface BundleSink {
  void add(String entry, String text);

  void addFile(String entry, Path file) throws IOException;

  /** A step that failed, as the summary lists it. */
  void failed(String failure);

  /** One more collected item of {@code kind}, for the summary's counts. */
  void count(String kind);
}

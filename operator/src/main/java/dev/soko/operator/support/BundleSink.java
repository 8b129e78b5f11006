package dev.soko.operator.support;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Supplier;

/** Where the parts of a support bundle put their entries, and what they could not collect. */
interface BundleSink {
  void add(String entry, String text);

  void addFile(String entry, Path file) throws IOException;

  /** A step that failed, as the summary lists it. */
  void failed(String failure);

  /** One more collected item of {@code kind}, for the summary's counts. */
  void count(String kind);

  /** A remark listed among the summary's counts (kinds skipped, and why). */
  void note(String text);

  /** The step's result, or null after recording its failure: no step is fatal to a bundle. */
  default <T> T attempt(String what, Supplier<T> step) {
    try {
      return step.get();
    } catch (RuntimeException e) {
      failed(what + ": " + SupportBundle.message(e));
      return null;
    }
  }
}

package dev.soko.driver.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.state.Journal.Entry;
import dev.soko.driver.state.Journal.Op;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalTest {
  private static final long SIZE = 64 * 1024;

  @TempDir Path dir;

  private Journal open() {
    return Journal.open(dir.resolve("journal"), SIZE);
  }

  private static void put(Journal journal, String id, String payload) {
    journal.awaitDurable(journal.append(Op.PUT, id, payload));
  }

  @Test
  void isCreatedFullSizeAndReplaysWhatWasAppended() throws Exception {
    Journal journal = open();
    assertThat(Files.size(dir.resolve("journal"))).isEqualTo(SIZE);
    assertThat(journal.takeReplayed()).isEmpty();
    put(journal, "vol-a", "{\"x\": \"1\"}");
    journal.awaitDurable(journal.append(Op.DELETE, "vol-b", ""));
    put(journal, "vol-c", "{\"name\": \"é\"}");
    journal.close();

    assertThat(open().takeReplayed())
        .containsExactly(
            new Entry(Op.PUT, "vol-a", "{\"x\": \"1\"}"),
            new Entry(Op.DELETE, "vol-b", ""),
            new Entry(Op.PUT, "vol-c", "{\"name\": \"é\"}"));
  }

  @Test
  void appendsAfterAReplayContinueWhereTheEntriesEnd() {
    Journal first = open();
    put(first, "vol-a", "{\"name\": \"ü\"}"); // multi-byte UTF-8: bytes, not chars, count
    first.close();
    Journal second = open();
    put(second, "vol-b", "two");
    second.close();
    assertThat(open().takeReplayed()).extracting(Entry::id).containsExactly("vol-a", "vol-b");
  }

  @Test
  void replayStopsAtATornEntry() throws Exception {
    Journal journal = open();
    put(journal, "vol-a", "one");
    put(journal, "vol-b", "two");
    put(journal, "vol-c", "three");
    journal.close();
    // Flip the last byte of the second entry, as a write cut short by a power loss leaves it.
    long secondEnd = Journal.HEADER_BYTES + 2L * (8 + 11 + 5) + 3;
    try (RandomAccessFile file = new RandomAccessFile(dir.resolve("journal").toFile(), "rw")) {
      file.seek(secondEnd - 1);
      int b = file.read();
      file.seek(secondEnd - 1);
      file.write(b ^ 0xff);
    }
    assertThat(open().takeReplayed()).extracting(Entry::id).containsExactly("vol-a");
  }

  @Test
  void resetRetiresEveryEntryOfTheOldEpoch() {
    Journal journal = open();
    put(journal, "vol-a", "one");
    put(journal, "vol-b", "two");
    put(journal, "vol-c", "three");
    journal.reset();
    put(journal, "vol-d", "four"); // overwrites vol-a's slot; vol-b and vol-c stay on disk
    journal.close();
    assertThat(open().takeReplayed()).extracting(Entry::id).containsExactly("vol-d");
  }

  @Test
  void saysWhenFullAndRefusesWhatCouldNeverFit() {
    Journal journal = open();
    String payload = "x".repeat(1000);
    int appended = 0;
    while (journal.append(Op.PUT, "vol-a", payload) > 0) {
      appended++;
    }
    assertThat(appended).isEqualTo((int) ((SIZE - Journal.HEADER_BYTES) / (8 + 11 + 5 + 1000)));
    journal.reset();
    assertThat(journal.append(Op.PUT, "vol-a", payload)).isPositive();
    assertThatThrownBy(() -> journal.append(Op.PUT, "vol-a", "x".repeat((int) SIZE)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDamagedHeaderIsAnErrorNotAnEmptyJournal() throws Exception {
    open().close();
    try (RandomAccessFile file = new RandomAccessFile(dir.resolve("journal").toFile(), "rw")) {
      file.write(new byte[] {'X'});
    }
    assertThatThrownBy(this::open).hasMessageContaining("cannot open journal");
  }
}

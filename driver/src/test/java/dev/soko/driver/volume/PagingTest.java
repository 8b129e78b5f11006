package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PagingTest {
  private final TreeMap<String, String> items = new TreeMap<>();

  PagingTest() {
    for (String id : new String[] {"a1", "a2", "a3", "a4", "a5"}) {
      items.put(id, id.toUpperCase());
    }
  }

  @Test
  void walksAllPagesWithTokens() {
    Page<String> first = Paging.page(items, "", 2, id -> id.startsWith("a"));
    assertThat(first.items()).containsExactly("A1", "A2");
    assertThat(first.nextToken()).isEqualTo("a2");
    Page<String> second = Paging.page(items, first.nextToken(), 2, id -> id.startsWith("a"));
    assertThat(second.items()).containsExactly("A3", "A4");
    Page<String> last = Paging.page(items, second.nextToken(), 2, id -> id.startsWith("a"));
    assertThat(last.items()).containsExactly("A5");
    assertThat(last.nextToken()).isEmpty();
  }

  @Test
  void exactFitHasNoNextTokenAndZeroMeansAll() {
    assertThat(Paging.page(items, "", 5, id -> true).nextToken()).isEmpty();
    assertThat(Paging.page(items, "", 0, id -> true).items()).hasSize(5);
  }

  @Test
  void aDeletedTokenStillContinuesAfterIt() {
    Page<String> first = Paging.page(items, "", 2, id -> true);
    items.remove(first.nextToken());
    assertThat(Paging.page(items, first.nextToken(), 2, id -> true).items())
        .containsExactly("A3", "A4");
  }

  @Test
  void foreignTokenIsAbortedAndNegativeMaxInvalid() {
    assertThat(EngineFixture.reason(() -> Paging.page(items, "zz", 1, id -> id.startsWith("a"))))
        .isEqualTo(StorageException.Reason.ABORTED);
    assertThat(EngineFixture.reason(() -> Paging.page(items, "", -1, id -> true)))
        .isEqualTo(StorageException.Reason.INVALID_ARGUMENT);
  }
}

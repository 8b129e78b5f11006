package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClientLogTest {
  private static final String LOG =
      """
      begin create a -
      ok create a vol-1
      begin expand vol-1 9437184
      ok expand vol-1 10485760
      begin delete vol-1
      ok delete vol-1
      begin create b -
      ok create b vol-2
      begin snapshot s vol-2
      ok snapshot s snap-1
      begin create c snap:snap-1
      """;

  @Test
  void afterAKillEveryAnswerStandsAndTheLastOperationMayHaveGoneEitherWay() {
    ClientLog.Expectations told = ClientLog.parse(LOG).atEnd();

    assertThat(told.acknowledged).isEqualTo(5);
    assertThat(told.uncertain).isEqualTo(1);
    assertThat(told.volumes.required).containsExactly("vol-2");
    assertThat(told.volumes.allowed("vol-1", "a")).as("deleted and answered").isFalse();
    assertThat(told.volumes.allowed("vol-9", "c")).as("in flight, ID never told").isTrue();
    assertThat(told.snapshots.required).containsExactly("snap-1");
    assertThat(told.minimumCapacity).containsEntry("vol-1", 10L << 20);
  }

  @Test
  void everyCopyHoldsTheContentOfTheBlankVolumeItDescendsFrom() {
    ClientLog.Expectations told = ClientLog.parse(LOG).atEnd();

    assertThat(told.origin("b")).isEqualTo("b");
    assertThat(told.origin("s")).as("a snapshot of b").isEqualTo("b");
    assertThat(told.origin("c")).as("restored from s").isEqualTo("b");
    assertThat(told.mayBeUnwritten("b")).isFalse();
    assertThat(told.mayBeUnwritten("c")).as("restored from what b was given").isFalse();
  }

  @Test
  void aCutBetweenTwoOffsetsKeepsWhatWasAnsweredBeforeAndNothingBegunAfter() {
    long before = offsetAfter("ok create a vol-1\n");
    long after = offsetAfter("begin delete vol-1\n");

    ClientLog.Expectations told = ClientLog.parse(LOG).between(before, after);

    assertThat(told.acknowledged).isEqualTo(1);
    assertThat(told.uncertain).as("the expand and the delete").isEqualTo(2);
    assertThat(told.volumes.required).as("its delete had begun").isEmpty();
    assertThat(told.volumes.allowed("vol-1", "a")).as("its delete may not have landed").isTrue();
    assertThat(told.volumes.allowed("vol-2", "b")).as("created after the cut").isFalse();
    assertThat(told.snapshots.allowed("snap-1", "s")).isFalse();
    assertThat(told.minimumCapacity).as("the expand was not answered by then").isEmpty();
    assertThat(told.mayBeUnwritten("a")).as("its create was answered").isFalse();
  }

  @Test
  void aLastLineWithoutItsNewlineIsNotRead() {
    ClientLog.Expectations told =
        ClientLog.parse("begin create a -\nok create a vol-1\nbegin delete vol-1\nok dele").atEnd();

    assertThat(told.volumes.required).as("the delete was never answered").isEmpty();
    assertThat(told.volumes.allowed("vol-1", "a")).isTrue();
  }

  @Test
  void aBlankCreateInFlightMayHaveLostItsContent() {
    long before = 0;
    long after = offsetAfter("begin create a -\n");

    ClientLog.Expectations told = ClientLog.parse(LOG).between(before, after);

    assertThat(told.mayBeUnwritten("a")).isTrue();
    assertThat(told.volumes.allowed("vol-1", "a")).isTrue();
  }

  @Test
  void copiesOfABlankVolumeWhoseCreateWasNeverAnsweredMayHoldZeros() {
    String log =
        """
        begin create a -
        adopt a vol-1
        begin snapshot s vol-1
        ok snapshot s snap-1
        """;

    ClientLog.Expectations told = ClientLog.parse(log).atEnd();

    assertThat(told.origin("s")).isEqualTo("a");
    assertThat(told.mayBeUnwritten("s")).as("a was killed before its data was written").isTrue();
    assertThat(told.snapshots.required).containsExactly("snap-1");
  }

  private static long offsetAfter(String line) {
    return LOG.indexOf(line) + line.length();
  }
}

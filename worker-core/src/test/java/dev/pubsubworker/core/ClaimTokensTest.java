package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class ClaimTokensTest {

  @Test
  void tokens_are_unique_printable_and_short() throws Exception {
    Set<String> seen = ConcurrentHashMap.newKeySet();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < 25_000; i++) {
                  seen.add(ClaimTokens.next());
                }
              });
      threads.add(thread);
      thread.start();
    }
    start.countDown();
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(seen).hasSize(100_000);
    for (String token : seen) {
      assertThat(token.length()).isBetween(24, 36);
      assertThat(token.chars()).allMatch(c -> c >= 0x21 && c <= 0x7e);
    }
    // Accepted as claim tokens.
    new ClaimRequest(
        "k", Duration.ofSeconds(1), Duration.ofSeconds(1), seen.iterator().next(), null);
  }

  @Test
  void every_process_draws_its_own_random_prefix() {
    String a = ClaimTokens.next();
    String b = ClaimTokens.next();
    String prefix = a.substring(0, a.indexOf('.') + 1);
    assertThat(b).startsWith(prefix);
    assertThat(prefix).hasSize(23);
    // 128 random bits: not a constant of the code.
    Set<String> prefixes = new HashSet<>();
    prefixes.add(prefix);
    assertThat(prefixes).doesNotContain("AAAAAAAAAAAAAAAAAAAAAA.");
  }
}

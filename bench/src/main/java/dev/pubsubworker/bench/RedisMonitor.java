package dev.pubsubworker.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Counts the commands Redis executes for one client workload, from Redis's own {@code MONITOR}
 * feed: top-level commands (what clients sent: round trips, or pipelined commands) whose line names
 * a key under {@code prefix}, plus the keyless {@code MULTI}, {@code TIME} and {@code EXEC} of the
 * connections that send such lines (a transaction's), and the commands the scripts among them ran
 * inside Redis ({@code [0 lua]} lines, which Redis prints right after their script). Commands of
 * other clients are ignored, so a shared Redis works. {@link #stop} ends the count at a sentinel
 * {@code ECHO} the caller sends, so nothing in flight is missed.
 */
final class RedisMonitor implements AutoCloseable {

  /** Commands that name no key but belong to a workload's transaction. */
  private static final java.util.Set<String> KEYLESS = java.util.Set.of("multi", "exec", "time");

  final Map<String, Long> topLevel = new TreeMap<>();
  private final java.util.Set<String> ourSources = new java.util.HashSet<>();
  private final Map<String, Map<String, Long>> keyless = new java.util.HashMap<>();
  final Map<String, Long> inScripts = new TreeMap<>();
  private final Socket socket;
  private final BufferedReader in;
  private final String prefix;
  private final String sentinel;
  private final CountDownLatch ended = new CountDownLatch(1);
  private final Thread reader;
  private volatile IOException failure;

  /** Connects to {@code redisUri}, starts {@code MONITOR} and waits until Redis confirms it. */
  RedisMonitor(String redisUri, String prefix, String sentinel) throws IOException {
    this.prefix = prefix;
    this.sentinel = sentinel;
    URI uri = URI.create(redisUri);
    socket = new Socket(uri.getHost(), uri.getPort() > 0 ? uri.getPort() : 6379);
    in =
        new BufferedReader(
            new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
    OutputStream out = socket.getOutputStream();
    if (uri.getUserInfo() != null) {
      String[] parts = uri.getUserInfo().split(":", 2);
      String auth =
          parts.length == 2 && !parts[0].isEmpty()
              ? command("AUTH", parts[0], parts[1])
              : command("AUTH", parts[parts.length - 1]);
      out.write(auth.getBytes(StandardCharsets.ISO_8859_1));
      expectOk();
    }
    out.write(command("MONITOR").getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
    expectOk();
    reader = new Thread(this::read, "redis-monitor");
    reader.setDaemon(true);
    reader.start();
  }

  private static String command(String... args) {
    StringBuilder s = new StringBuilder("*").append(args.length).append("\r\n");
    for (String a : args) {
      s.append('$').append(a.getBytes(StandardCharsets.ISO_8859_1).length).append("\r\n");
      s.append(a).append("\r\n");
    }
    return s.toString();
  }

  private void expectOk() throws IOException {
    String line = in.readLine();
    if (line == null || !line.startsWith("+OK")) {
      throw new IOException("Redis answered " + line);
    }
  }

  private void read() {
    boolean ours = false;
    try {
      String line;
      while ((line = in.readLine()) != null) {
        int open = line.indexOf('[');
        int close = line.indexOf("] ", open);
        if (open < 0 || close < 0) {
          continue;
        }
        String source = line.substring(open + 1, close);
        String rest = line.substring(close + 2);
        int q = rest.indexOf('"', 1);
        String cmd = q > 0 ? rest.substring(1, q).toLowerCase(java.util.Locale.ROOT) : rest;
        if (source.endsWith(" lua")) {
          if (ours) {
            inScripts.merge(cmd, 1L, Long::sum);
          }
          continue;
        }
        if (cmd.equals("echo") && rest.contains(sentinel)) {
          ended.countDown();
          return;
        }
        ours = rest.contains(prefix);
        if (ours) {
          topLevel.merge(cmd, 1L, Long::sum);
          if (ourSources.add(source)) {
            // Keyless commands this connection sent before its first line naming a key.
            Map<String, Long> early = keyless.remove(source);
            if (early != null) {
              early.forEach((c, n) -> topLevel.merge(c, n, Long::sum));
            }
          }
        } else if (KEYLESS.contains(cmd)) {
          // The claim transaction's MULTI, TIME and EXEC name no key: they count for the
          // connections that send the benchmark's keys.
          if (ourSources.contains(source)) {
            topLevel.merge(cmd, 1L, Long::sum);
          } else {
            keyless.computeIfAbsent(source, k -> new TreeMap<>()).merge(cmd, 1L, Long::sum);
          }
        }
      }
    } catch (IOException e) {
      failure = e;
    } finally {
      ended.countDown();
    }
  }

  /** Waits until the sentinel has come through (the caller has sent it). */
  void awaitSentinel() throws IOException, InterruptedException {
    if (!ended.await(1, TimeUnit.MINUTES)) {
      throw new IOException("the MONITOR feed did not show the sentinel within a minute");
    }
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

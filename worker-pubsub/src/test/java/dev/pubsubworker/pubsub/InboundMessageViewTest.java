package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.pubsubworker.api.InboundMessage;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** An {@link InboundMessage} over a protobuf payload's read-only view: no copy until asked. */
class InboundMessageViewTest {

  private final ByteString payload = ByteString.copyFromUtf8("héllo, payload");

  private InboundMessage message() {
    return new InboundMessage(
        "m-1", payload.asReadOnlyByteBuffer(), Map.of("a", "1"), "", Instant.EPOCH, 3);
  }

  @Test
  void the_view_reads_the_whole_payload_however_often() {
    InboundMessage m = message();
    assertThat(m.dataSize()).isEqualTo(payload.size());
    assertThat(m.data()).isEqualTo(payload.toByteArray());
    assertThat(m.data()).isNotSameAs(m.data());
    assertThat(m.dataAsUtf8()).isEqualTo("héllo, payload");
    ByteBuffer first = m.dataBuffer();
    first.get(new byte[first.remaining()]);
    // Reading one buffer moves nobody else's position.
    assertThat(m.dataBuffer().remaining()).isEqualTo(payload.size());
    assertThat(StandardCharsets.UTF_8.decode(m.dataBuffer()).toString())
        .isEqualTo("héllo, payload");
    assertThat(m.toString()).isEqualTo("InboundMessage[id=m-1, bytes=15, attempt=3]");
  }

  @Test
  void neither_the_payload_nor_the_attributes_can_be_changed_through_it() {
    InboundMessage m = message();
    assertThatThrownBy(() -> m.dataBuffer().put(0, (byte) 1))
        .isInstanceOf(ReadOnlyBufferException.class);
    m.data()[0] = 'X';
    assertThat(m.dataAsUtf8()).startsWith("h");
    assertThatThrownBy(() -> m.attributes().put("b", "2"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void the_array_constructor_still_copies() {
    byte[] bytes = "abc".getBytes(StandardCharsets.UTF_8);
    InboundMessage m = new InboundMessage("m-2", bytes, Map.of(), "", Instant.EPOCH, 0);
    bytes[0] = 'X';
    assertThat(m.dataAsUtf8()).isEqualTo("abc");
  }
}

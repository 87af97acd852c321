package dev.pubsubworker.backend.datastore;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.datastore.DatastoreException;
import java.io.IOException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

class FailureTest {

  @Test
  void classifies_by_status_code_not_by_message() {
    assertThat(Failure.classify(new DatastoreException(10, "anything", "x")))
        .isEqualTo(Failure.CONTENTION);
    assertThat(Failure.classify(new DatastoreException(10, "Transaction lock timeout.", "")))
        .isEqualTo(Failure.CONTENTION);
    assertThat(Failure.classify(new DatastoreException(14, "ABORTED", "ABORTED")))
        .isEqualTo(Failure.TRANSIENT);
    assertThat(Failure.classify(new DatastoreException(4, "slow", (String) null)))
        .isEqualTo(Failure.TRANSIENT);
    assertThat(Failure.classify(new DatastoreException(7, "denied", (String) null)))
        .isEqualTo(Failure.PERMANENT);
    assertThat(Failure.classify(new DatastoreException(3, "bad", (String) null)))
        .isEqualTo(Failure.PERMANENT);
  }

  @Test
  void io_failures_of_the_transport_are_transient() {
    assertThat(Failure.classify(new DatastoreException(new ConnectException("refused"))))
        .isEqualTo(Failure.TRANSIENT);
    assertThat(Failure.classify(new RuntimeException(new IOException("reset"))))
        .isEqualTo(Failure.TRANSIENT);
  }

  @Test
  void anything_else_is_permanent() {
    assertThat(Failure.classify(new IllegalStateException("closed"))).isEqualTo(Failure.PERMANENT);
  }
}

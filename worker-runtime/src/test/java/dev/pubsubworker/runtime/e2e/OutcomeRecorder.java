package dev.pubsubworker.runtime.e2e;

import com.google.cloud.pubsub.v1.AckResponse;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records every settled outcome and every exactly-once ack response. */
class OutcomeRecorder implements DispatchListener {
  final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
  final List<AckResponse> ackResponses = new CopyOnWriteArrayList<>();

  @Override
  public void settled(String subscription, Outcome outcome, Duration handlerTime) {
    outcomes.add(outcome);
  }

  @Override
  public void ackResponse(String subscription, AckResponse response) {
    ackResponses.add(response);
  }

  long count(Outcome o) {
    return outcomes.stream().filter(x -> x == o).count();
  }
}

package dev.pubsubworker.spring.boot;

import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.cloud.spring.autoconfigure.pubsub.GcpPubSubAutoConfiguration;
import com.google.cloud.spring.autoconfigure.pubsub.GcpPubSubProperties;
import com.google.cloud.spring.pubsub.PubSubAdmin;
import com.google.cloud.spring.pubsub.core.PubSubTemplate;
import com.google.cloud.spring.pubsub.integration.inbound.PubSubInboundChannelAdapter;
import com.google.cloud.spring.pubsub.support.SubscriberFactory;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.pubsub.micrometer.ReceiverMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Clock;
import java.time.Duration;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.integration.endpoint.IntegrationConsumer;

/**
 * Exactly-once for Spring Cloud GCP Pub/Sub consumers: the lock store of {@code
 * pubsub-worker.lock-store} (unless the application defines a {@link LockBackend} bean), the {@link
 * GuardedSubscriptions} that build each subscription's receiver from {@code
 * pubsub-worker.subscriptions}, and, with the libraries present, the metrics ({@link
 * ReceiverMetrics} on Boot's {@code MeterRegistry}), the health indicator ({@link
 * PubSubWorkerHealthIndicator}, {@code management.health.pubsub-worker.enabled}) and the check of
 * the inbound channel adapters that feed a {@link GuardedPubSubMessageHandler}. Off with {@code
 * pubsub-worker.enabled=false}.
 */
@AutoConfiguration(
    after = GcpPubSubAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration"
    })
@ConditionalOnClass({PubSubTemplate.class, GuardedReceiver.class})
@ConditionalOnProperty(
    prefix = PubSubWorkerProperties.PREFIX,
    name = "enabled",
    matchIfMissing = true)
@EnableConfigurationProperties(PubSubWorkerProperties.class)
public class PubSubWorkerAutoConfiguration {

  private static final Logger log = LoggerFactory.getLogger(PubSubWorkerAutoConfiguration.class);

  /** Boot's default of {@code spring.lifecycle.timeout-per-shutdown-phase}. */
  static final Duration DEFAULT_SHUTDOWN_PHASE_TIMEOUT = Duration.ofSeconds(30);

  /** What the lock store opens for itself (the SQL store's own pool); closed after the store. */
  @Bean
  OwnedResources pubSubWorkerLockStoreResources() {
    return new OwnedResources();
  }

  /** The lock store of {@code pubsub-worker.lock-store}; closed with the context. */
  @Bean
  @ConditionalOnMissingBean(LockBackend.class)
  LockBackend pubSubWorkerLockBackend(
      PubSubWorkerProperties properties,
      ListableBeanFactory beans,
      ObjectProvider<DataSource> dataSources,
      ObjectProvider<SubscriberFactory> subscriberFactory,
      OwnedResources resources) {
    return LockStores.create(
        properties,
        name -> dataSource(beans, dataSources, name),
        () -> {
          SubscriberFactory f = subscriberFactory.getIfAvailable();
          return f == null ? null : f.getProjectId();
        },
        resources);
  }

  private static DataSource dataSource(
      ListableBeanFactory beans, ObjectProvider<DataSource> dataSources, @Nullable String name) {
    String property = PubSubWorkerProperties.PREFIX + ".lock-store.sql.data-source";
    if (name != null) {
      try {
        return beans.getBean(name, DataSource.class);
      } catch (NoSuchBeanDefinitionException e) {
        throw new InvalidConfigurationPropertyValueException(
            property, name, "no DataSource bean of that name");
      }
    }
    DataSource ds = dataSources.getIfUnique();
    if (ds == null) {
      throw new InvalidConfigurationPropertyValueException(
          PubSubWorkerProperties.PREFIX + ".lock-store.sql.url",
          null,
          "the SQL lock store found no single DataSource bean to use: configure the application's"
              + " (spring.datasource.url), name one with "
              + property
              + ", or give the store a database of its own with this url");
    }
    return ds;
  }

  /** The application's guarded subscriptions. */
  @Bean
  @ConditionalOnMissingBean
  GuardedSubscriptions guardedSubscriptions(
      PubSubWorkerProperties properties,
      LockBackend backend,
      SubscriberFactory subscriberFactory,
      ObjectProvider<PubSubTemplate> subscriber,
      TopicAdminSettings topicAdminSettings,
      ObjectProvider<PubSubAdmin> admin,
      ObjectProvider<GcpPubSubProperties> gcpPubSubProperties,
      ObjectProvider<GuardedReceiverCustomizer> receiverCustomizers,
      ObjectProvider<IdempotencyGuardCustomizer> guardCustomizers,
      Environment environment) {
    GcpPubSubProperties gcp = gcpPubSubProperties.getIfAvailable();
    PubSubAdmin pubSubAdmin = admin.getIfAvailable();
    GuardedSubscriptions.Wiring wiring =
        new GuardedSubscriptions.Wiring(
            subscriberFactory.getProjectId(),
            subscriber.getIfAvailable(),
            new DeadLetterTopics(topicAdminSettings),
            (topic, property) -> checkTopic(pubSubAdmin, topic, property),
            (name, project) -> gcp == null ? null : gcp.computeMaxAckExtensionPeriod(name, project),
            Binder.get(environment)
                .bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
                .orElse(DEFAULT_SHUTDOWN_PHASE_TIMEOUT),
            receiverCustomizers.orderedStream().toList(),
            guardCustomizers.orderedStream().toList(),
            PubSubWorkerAutoConfiguration.class.getClassLoader());
    return new GuardedSubscriptions(properties, backend, wiring);
  }

  private static void checkTopic(@Nullable PubSubAdmin admin, TopicName topic, String property) {
    if (admin == null) {
      return;
    }
    try {
      if (admin.getTopic(topic.toString()) == null) {
        throw new IllegalStateException(
            "the dead-letter topic " + topic + " (" + property + ") does not exist");
      }
    } catch (ApiException e) {
      if (e.getStatusCode().getCode() == StatusCode.Code.PERMISSION_DENIED) {
        log.warn(
            "cannot check that the dead-letter topic {} exists (no pubsub.topics.get permission);"
                + " a dead letter to it fails and nacks its message if it does not",
            topic);
        return;
      }
      throw e;
    }
  }

  /** Micrometer: {@link ReceiverMetrics}, bound by Boot to its registry, on every receiver. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterBinder.class)
  static class Metrics {

    @Bean
    @ConditionalOnMissingBean
    ReceiverMetrics pubSubWorkerMetrics(PubSubWorkerProperties properties) {
      return ReceiverMetrics.of(properties.getSubscriptions().keySet());
    }

    @Bean
    MetricsCustomizer pubSubWorkerMetricsCustomizer(ReceiverMetrics metrics) {
      return new MetricsCustomizer(metrics);
    }
  }

  /** Actuator: the health indicator and its lock-store probe. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  @ConditionalOnEnabledHealthIndicator("pubsub-worker")
  static class Health {

    @Bean
    LockStoreHealth pubSubWorkerLockStoreHealth(
        PubSubWorkerProperties properties, LockBackend backend) {
      return new LockStoreHealth(
          backend,
          properties.getHealth().getLockStoreProbeInterval(),
          properties.getHealth().getLockStoreStaleAfter(),
          Clock.systemUTC());
    }

    /** Every guard reports its store calls to the health indicator. */
    @Bean
    IdempotencyGuardCustomizer pubSubWorkerLockStoreHealthCustomizer(LockStoreHealth health) {
      return (id, builder) -> builder.listener(health);
    }

    @Bean
    PubSubWorkerHealthIndicator pubSubWorkerHealthIndicator(
        GuardedSubscriptions subscriptions, LockStoreHealth health) {
      return new PubSubWorkerHealthIndicator(subscriptions, health);
    }
  }

  /** Spring Integration: the check of the channel adapters that feed guarded handlers. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({PubSubInboundChannelAdapter.class, IntegrationConsumer.class})
  static class ChannelAdapters {

    @Bean
    ChannelAdapterCheck pubSubWorkerChannelAdapterCheck(
        ListableBeanFactory beans, GuardedSubscriptions subscriptions) {
      return new ChannelAdapterCheck(beans, subscriptions);
    }
  }
}

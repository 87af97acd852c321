#!/usr/bin/env bash
# Startup script for the worker's VMs in a managed instance group (Debian 12 images). Compute
# Engine runs it as root at every boot; it is idempotent. It
#   1. installs Java 17 and the Ops Agent (Cloud Logging reads the worker's JSON lines from
#      journald, Cloud Monitoring gets host metrics),
#   2. creates the non-root user pubsub-worker, which owns nothing it runs,
#   3. fetches the executable jar and the systemd unit from the Cloud Storage folder named by the
#      instance metadata key pubsub-worker-artifacts (e.g. gs://BUCKET/pubsub-worker),
#   4. writes the worker's config, and its environment with the lock store's secret from Secret
#      Manager (secret orders-worker-redis-uri),
#   5. enables and (re)starts pubsub-worker.service.
#
# The VM's service account needs roles/pubsub.subscriber and roles/pubsub.viewer on the
# subscription, roles/storage.objectViewer on the bucket, roles/secretmanager.secretAccessor on
# the secret, roles/logging.logWriter and roles/monitoring.metricWriter. README "Deploying" has
# the instance template, the group and its autoscaling on the subscription's backlog.
set -euo pipefail

readonly METADATA=http://metadata.google.internal/computeMetadata/v1
readonly SECRET=orders-worker-redis-uri

metadata() {
  curl -fsS -H 'Metadata-Flavor: Google' "${METADATA}/$1"
}

# 1. Java 17 and the Ops Agent.
if ! command -v java >/dev/null || ! java -version 2>&1 | grep -q '"17\.'; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless
fi
if ! systemctl list-unit-files google-cloud-ops-agent.service >/dev/null 2>&1; then
  curl -fsSL -o /tmp/add-google-cloud-ops-agent-repo.sh \
    https://dl.google.com/cloudagents/add-google-cloud-ops-agent-repo.sh
  bash /tmp/add-google-cloud-ops-agent-repo.sh --also-install
fi

# 2. The service user: no home, no shell, no files of its own.
if ! id pubsub-worker >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin pubsub-worker
fi

# 3. The jar and the unit, owned by root, read-only for the worker.
artifacts="$(metadata instance/attributes/pubsub-worker-artifacts)"
install -d -o root -g root -m 0755 /opt/pubsub-worker /opt/pubsub-worker/plugins
gcloud storage cp "${artifacts}/pubsub-worker.jar" /opt/pubsub-worker/pubsub-worker.jar.new
gcloud storage cp "${artifacts}/pubsub-worker.service" /etc/systemd/system/pubsub-worker.service
if gcloud storage ls "${artifacts}/plugins/" >/dev/null 2>&1; then
  gcloud storage cp "${artifacts}/plugins/*.jar" /opt/pubsub-worker/plugins/
fi
chmod 0644 /opt/pubsub-worker/pubsub-worker.jar.new /etc/systemd/system/pubsub-worker.service
mv /opt/pubsub-worker/pubsub-worker.jar.new /opt/pubsub-worker/pubsub-worker.jar

# 4. The config (every VM of the group gets the same one, so they share one lock store) and the
#    environment with the store's secret, readable by root only: systemd reads it for the unit.
install -d -o root -g pubsub-worker -m 0750 /etc/pubsub-worker
cat > /etc/pubsub-worker/worker.conf <<'CONF'
pubsub-worker {
  project-id = ${?GOOGLE_CLOUD_PROJECT}

  # Below the unit's TimeoutStopSec (75s) minus the worker's stop bound (15s).
  shutdown-grace = 45s

  lock-store {
    type = redis
    redis {
      # rediss://default:AUTH_STRING@10.0.0.3:6378, from Secret Manager through worker.env.
      uri = ${?PUBSUB_WORKER_REDIS_URI}
      key-prefix = "orders-worker:lock:"
      command-timeout = 2s
    }
  }

  observability.http-port = 8080
  logging { format = json, key-format = sha256 }

  subscription-defaults {
    lease = 30s
    ttl = 24h
    flow-control.max-outstanding-messages = 200
    executor-threads = 8
  }

  subscriptions {
    orders {
      name = "orders-sub"
      handler = "orders"
      key = "template:orders:{order_id}"
      exactly-once = auto
    }
  }
}
CONF
chown root:pubsub-worker /etc/pubsub-worker/worker.conf
chmod 0640 /etc/pubsub-worker/worker.conf

umask 077
{
  echo "GOOGLE_CLOUD_PROJECT=$(metadata project/project-id)"
  echo "PUBSUB_WORKER_REDIS_URI=$(gcloud secrets versions access latest --secret="${SECRET}")"
} > /etc/pubsub-worker/worker.env.new
chown root:root /etc/pubsub-worker/worker.env.new
mv /etc/pubsub-worker/worker.env.new /etc/pubsub-worker/worker.env
umask 022

# The Ops Agent: the worker's journald lines, parsed as JSON (severity, message and the MDC
# fields become the entry's severity and jsonPayload).
cat > /etc/google-cloud-ops-agent/config.yaml <<'OPS'
logging:
  receivers:
    pubsub_worker:
      type: systemd_journald
  processors:
    pubsub_worker_only:
      type: exclude_logs
      match_any:
        - 'jsonPayload.SYSLOG_IDENTIFIER != "pubsub-worker"'
    pubsub_worker_json:
      type: parse_json
      field: MESSAGE
    pubsub_worker_severity:
      type: modify_fields
      fields:
        severity:
          move_from: jsonPayload.severity
  service:
    pipelines:
      pubsub_worker:
        receivers: [pubsub_worker]
        processors: [pubsub_worker_only, pubsub_worker_json, pubsub_worker_severity]
OPS
systemctl restart google-cloud-ops-agent

# 5. Start, or restart with the new jar and config.
systemctl daemon-reload
systemctl enable pubsub-worker.service
systemctl restart pubsub-worker.service

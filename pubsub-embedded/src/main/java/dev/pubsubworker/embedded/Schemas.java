package dev.pubsubworker.embedded;

import com.google.protobuf.Timestamp;
import com.google.pubsub.v1.Encoding;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.Schema;
import com.google.pubsub.v1.SchemaSettings;
import com.google.pubsub.v1.SchemaView;
import com.google.pubsub.v1.ValidateMessageRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The schemas of the server and their revisions, and the validation of messages published to a
 * topic with {@code schema_settings}. Not thread-safe: the {@link Broker} calls it under its lock.
 *
 * <p>Errors are worded as Google's emulator words them where it has the case ("Schema not found",
 * "Could not parse schema definition", "No encoding provided."), followed by the parser's detail.
 */
final class Schemas {

  /** The schema name a topic's schema_settings takes when its schema is deleted, as on Pub/Sub. */
  static final String DELETED_SCHEMA = "_deleted-schema_";

  /** Attributes Pub/Sub adds to a message validated against a topic's schema. */
  static final String SCHEMA_NAME_ATTRIBUTE = "googclient_schemaname";

  static final String SCHEMA_ENCODING_ATTRIBUTE = "googclient_schemaencoding";
  static final String SCHEMA_REVISION_ATTRIBUTE = "googclient_schemarevisionid";

  private record Revision(Schema schema, MessageSchema parsed) {}

  private final Clock clock;

  /** Name -> revisions, oldest first. */
  private final NavigableMap<String, List<Revision>> schemas = new TreeMap<>();

  Schemas(Clock clock) {
    this.clock = clock;
  }

  Schema create(String parent, Schema schema, String schemaId) {
    Names.checkProject(parent);
    String name = Names.check(parent + "/schemas/" + schemaId, "schemas");
    MessageSchema parsed = parse(schema);
    if (schemas.containsKey(name)) {
      throw Status.ALREADY_EXISTS.withDescription("Schema already exists").asRuntimeException();
    }
    List<Revision> revisions = new ArrayList<>();
    revisions.add(newRevision(name, schema, parsed, revisions));
    schemas.put(name, revisions);
    return revisions.get(0).schema();
  }

  /** A schema, or with {@code name@revision} one revision; view unspecified means FULL. */
  Schema get(String nameAndRevision, SchemaView view) {
    return render(revision(nameAndRevision).schema(), view, SchemaView.FULL);
  }

  /** The schemas of a project, each its latest revision; view unspecified means BASIC. */
  List<Schema> list(String parent, SchemaView view) {
    Names.checkProject(parent);
    String prefix = parent + "/schemas/";
    List<Schema> result = new ArrayList<>();
    for (List<Revision> revisions : schemas.subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      result.add(render(latest(revisions).schema(), view, SchemaView.BASIC));
    }
    return result;
  }

  /** Every revision of a schema, oldest first; view unspecified means BASIC. */
  List<Schema> listRevisions(String name, SchemaView view) {
    List<Schema> result = new ArrayList<>();
    for (Revision revision : require(name)) {
      result.add(render(revision.schema(), view, SchemaView.BASIC));
    }
    return result;
  }

  Schema commit(String name, Schema schema) {
    List<Revision> revisions = require(name);
    MessageSchema parsed = parse(schema);
    Revision revision = newRevision(name, schema, parsed, revisions);
    revisions.add(revision);
    return revision.schema();
  }

  /** A new revision with the definition of {@code revisionId}. */
  Schema rollback(String name, String revisionId) {
    List<Revision> revisions = require(name);
    Revision old = findRevision(revisions, revisionId);
    if (old == null) {
      throw Status.NOT_FOUND.withDescription("Revision not found").asRuntimeException();
    }
    Revision revision = newRevision(name, old.schema(), old.parsed(), revisions);
    revisions.add(revision);
    return revision.schema();
  }

  /**
   * Deletes the revision {@code name@revision} (or, deprecated, {@code revisionId}) and returns it.
   *
   * @throws StatusRuntimeException FAILED_PRECONDITION for a schema's only revision
   */
  Schema deleteRevision(String nameAndRevision, String revisionId) {
    String target =
        nameAndRevision.contains("@") || revisionId.isEmpty()
            ? nameAndRevision
            : nameAndRevision + "@" + revisionId;
    if (!target.contains("@")) {
      require(target);
      throw Status.NOT_FOUND.withDescription("Schema revision not found").asRuntimeException();
    }
    Revision revision = revision(target);
    List<Revision> revisions = require(target.substring(0, target.indexOf('@')));
    if (revisions.size() == 1) {
      throw Status.FAILED_PRECONDITION
          .withDescription(
              "The only revision of a schema cannot be deleted; delete the schema instead")
          .asRuntimeException();
    }
    revisions.remove(revision);
    return revision.schema();
  }

  void delete(String name) {
    require(name);
    schemas.remove(name);
  }

  /**
   * ValidateSchema: the definition parses and is a schema Pub/Sub accepts.
   *
   * @throws StatusRuntimeException INVALID_ARGUMENT "Could not parse schema definition: ..."
   */
  void validate(String parent, Schema schema) {
    Names.checkProject(parent);
    parse(schema);
  }

  /** ValidateMessage: the message matches the named or the given schema in its encoding. */
  void validateMessage(ValidateMessageRequest request) {
    Names.checkProject(request.getParent());
    MessageSchema schema =
        switch (request.getSchemaSpecCase()) {
          case NAME -> revision(request.getName()).parsed();
          case SCHEMA -> parse(request.getSchema());
          default -> throw Validation.invalid("A schema name or a schema must be given");
        };
    if (request.getEncoding() != Encoding.JSON && request.getEncoding() != Encoding.BINARY) {
      throw Validation.invalid("No encoding provided.");
    }
    try {
      schema.check(request.getMessage(), request.getEncoding());
    } catch (MessageSchema.InvalidMessage e) {
      throw Validation.invalid(
          "Could not parse "
              + (request.getEncoding() == Encoding.JSON ? "JSON " : "binary ")
              + schema.typeName()
              + " message: "
              + e.getMessage());
    }
  }

  /**
   * Checks a topic's schema_settings: the schema exists (a deleted one, {@code _deleted-schema_},
   * does not), the encoding is JSON or BINARY, and the revision range names revisions of the
   * schema.
   *
   * @throws StatusRuntimeException NOT_FOUND "Schema could not be found", INVALID_ARGUMENT "Invalid
   *     schema encoding provided" (the emulator's words)
   */
  void checkSettings(SchemaSettings settings) {
    List<Revision> revisions = schemas.get(settings.getSchema());
    if (revisions == null && !settings.getSchema().equals(DELETED_SCHEMA)) {
      Names.check(settings.getSchema(), "schemas");
    }
    if (revisions == null) {
      throw Status.NOT_FOUND.withDescription("Schema could not be found").asRuntimeException();
    }
    if (settings.getEncoding() != Encoding.JSON && settings.getEncoding() != Encoding.BINARY) {
      throw Validation.invalid("Invalid schema encoding provided");
    }
    int first = revisionIndex(revisions, settings.getFirstRevisionId(), 0);
    int last = revisionIndex(revisions, settings.getLastRevisionId(), revisions.size() - 1);
    if (first > last) {
      throw Validation.invalid(
          "first_revision_id "
              + settings.getFirstRevisionId()
              + " was created after last_revision_id "
              + settings.getLastRevisionId());
    }
  }

  /**
   * Validates a message published to a topic with {@code settings} against the revisions the
   * settings allow, newest first, and returns it with the attributes Pub/Sub adds: the schema's
   * name, the encoding and the revision it matched.
   *
   * @throws StatusRuntimeException NOT_FOUND "Schema associated with topic deleted." when the
   *     schema is gone; INVALID_ARGUMENT "Invalid data in message: Message failed schema
   *     validation..." when no allowed revision matches
   */
  PubsubMessage validatePublished(SchemaSettings settings, PubsubMessage message) {
    List<Revision> revisions = schemas.get(settings.getSchema());
    if (revisions == null) {
      throw Status.NOT_FOUND
          .withDescription("Schema associated with topic deleted.")
          .asRuntimeException();
    }
    int first = revisionIndex(revisions, settings.getFirstRevisionId(), 0);
    int last = revisionIndex(revisions, settings.getLastRevisionId(), revisions.size() - 1);
    String problem = "no revision of the schema is allowed";
    for (int i = last; i >= first; i--) {
      Revision revision = revisions.get(i);
      try {
        revision.parsed().check(message.getData(), settings.getEncoding());
        return message.toBuilder()
            .putAttributes(SCHEMA_NAME_ATTRIBUTE, settings.getSchema())
            .putAttributes(SCHEMA_ENCODING_ATTRIBUTE, settings.getEncoding().name())
            .putAttributes(SCHEMA_REVISION_ATTRIBUTE, revision.schema().getRevisionId())
            .build();
      } catch (MessageSchema.InvalidMessage e) {
        problem = e.getMessage();
      }
    }
    throw Validation.invalid(
        "Invalid data in message: Message failed schema validation (" + problem + ")");
  }

  // ---- helpers ----

  private static MessageSchema parse(Schema schema) {
    if (schema.getType() != Schema.Type.AVRO && schema.getType() != Schema.Type.PROTOCOL_BUFFER) {
      throw Validation.invalid("Invalid schema type");
    }
    try {
      return MessageSchema.parse(schema.getType(), schema.getDefinition());
    } catch (MessageSchema.InvalidDefinition e) {
      throw Validation.invalid("Could not parse schema definition: " + e.getMessage());
    }
  }

  private Revision newRevision(
      String name, Schema schema, MessageSchema parsed, List<Revision> existing) {
    String id;
    do {
      id = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    } while (findRevision(existing, id) != null);
    Instant now = clock.instant();
    Schema stored =
        Schema.newBuilder()
            .setName(name)
            .setType(schema.getType())
            .setDefinition(schema.getDefinition())
            .setRevisionId(id)
            .setRevisionCreateTime(
                Timestamp.newBuilder().setSeconds(now.getEpochSecond()).setNanos(now.getNano()))
            .build();
    return new Revision(stored, parsed);
  }

  private List<Revision> require(String name) {
    Names.check(name, "schemas");
    List<Revision> revisions = schemas.get(name);
    if (revisions == null) {
      throw Status.NOT_FOUND.withDescription("Schema not found").asRuntimeException();
    }
    return revisions;
  }

  /** {@code name} (the latest revision) or {@code name@revision}. */
  private Revision revision(String nameAndRevision) {
    int at = nameAndRevision.indexOf('@');
    if (at < 0) {
      return latest(require(nameAndRevision));
    }
    Revision revision =
        findRevision(require(nameAndRevision.substring(0, at)), nameAndRevision.substring(at + 1));
    if (revision == null) {
      throw Status.NOT_FOUND.withDescription("Schema revision not found").asRuntimeException();
    }
    return revision;
  }

  private static Revision latest(List<Revision> revisions) {
    return revisions.get(revisions.size() - 1);
  }

  private static Revision findRevision(List<Revision> revisions, String revisionId) {
    for (Revision revision : revisions) {
      if (revision.schema().getRevisionId().equals(revisionId)) {
        return revision;
      }
    }
    return null;
  }

  /** The index of {@code revisionId}; {@code fallback} when it is empty. */
  private static int revisionIndex(List<Revision> revisions, String revisionId, int fallback) {
    if (revisionId.isEmpty()) {
      return fallback;
    }
    for (int i = 0; i < revisions.size(); i++) {
      if (revisions.get(i).schema().getRevisionId().equals(revisionId)) {
        return i;
      }
    }
    throw Status.NOT_FOUND
        .withDescription("Schema revision not found: " + revisionId)
        .asRuntimeException();
  }

  private static Schema render(Schema schema, SchemaView view, SchemaView unspecified) {
    SchemaView effective = view == SchemaView.SCHEMA_VIEW_UNSPECIFIED ? unspecified : view;
    return effective == SchemaView.BASIC ? schema.toBuilder().clearDefinition().build() : schema;
  }
}

package dev.pubsubworker.embedded;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.google.pubsub.v1.Encoding;
import com.google.pubsub.v1.Schema;
import java.io.IOException;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.DecoderFactory;

/**
 * A parsed schema definition, Avro or Protocol Buffer, that checks messages in the JSON or the
 * binary encoding.
 *
 * <p>Avro definitions are parsed by Apache Avro, and messages read with its JSON or binary decoder
 * (as Pub/Sub does: a JSON message is Avro's JSON encoding, unions written as {@code {"type":
 * value}}). A Protocol Buffer definition is the source text of one {@code .proto} file, read by
 * {@link ProtoSource}, with exactly one top-level message type (the type messages must have) and no
 * imports; JSON messages are read with protobuf's JSON format (unknown fields refused), binary ones
 * as the wire format (unknown fields kept, as protobuf does).
 */
abstract sealed class MessageSchema {

  /** A definition that cannot be used as a schema; the message says why. */
  static final class InvalidDefinition extends Exception {
    InvalidDefinition(String message) {
      super(message);
    }
  }

  /** A message that does not match the schema; the message says where. */
  static final class InvalidMessage extends Exception {
    InvalidMessage(String message) {
      super(message);
    }
  }

  /**
   * Parses {@code definition} as a schema of {@code type}.
   *
   * @throws InvalidDefinition when the definition does not parse, or is not a schema Pub/Sub
   *     accepts
   * @throws IllegalArgumentException for a type that is neither AVRO nor PROTOCOL_BUFFER
   */
  static MessageSchema parse(Schema.Type type, String definition) throws InvalidDefinition {
    return switch (type) {
      case AVRO -> new Avro(definition);
      case PROTOCOL_BUFFER -> new Protobuf(definition);
      default -> throw new IllegalArgumentException("not a schema type: " + type);
    };
  }

  /**
   * Checks that {@code data} is one message of this schema in {@code encoding} (JSON or BINARY).
   *
   * @throws InvalidMessage if it is not
   */
  abstract void check(ByteString data, Encoding encoding) throws InvalidMessage;

  /** "Avro" or "Protocol Buffer", for error texts. */
  abstract String typeName();

  private static final class Avro extends MessageSchema {
    private final org.apache.avro.Schema schema;

    Avro(String definition) throws InvalidDefinition {
      try {
        this.schema = new org.apache.avro.Schema.Parser().parse(definition);
      } catch (RuntimeException e) {
        throw new InvalidDefinition(e.getMessage());
      }
    }

    @Override
    void check(ByteString data, Encoding encoding) throws InvalidMessage {
      GenericDatumReader<Object> reader = new GenericDatumReader<>(schema);
      try {
        if (encoding == Encoding.JSON) {
          reader.read(null, DecoderFactory.get().jsonDecoder(schema, data.toStringUtf8()));
        } else {
          reader.read(null, DecoderFactory.get().binaryDecoder(data.toByteArray(), null));
        }
      } catch (IOException | RuntimeException e) {
        throw new InvalidMessage(String.valueOf(e.getMessage()));
      }
    }

    @Override
    String typeName() {
      return "Avro";
    }
  }

  private static final class Protobuf extends MessageSchema {
    private final Descriptors.Descriptor type;

    Protobuf(String definition) throws InvalidDefinition {
      FileDescriptorProto file;
      try {
        file = ProtoSource.parse("schema.proto", definition);
      } catch (ProtoSource.SyntaxError e) {
        throw new InvalidDefinition(e.getMessage());
      }
      if (file.getMessageTypeCount() != 1) {
        throw new InvalidDefinition(
            "a Protocol Buffer schema must define exactly one top-level message type, but this"
                + " one defines "
                + file.getMessageTypeCount());
      }
      try {
        this.type =
            Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[0])
                .getMessageTypes()
                .get(0);
      } catch (Descriptors.DescriptorValidationException e) {
        throw new InvalidDefinition(e.getMessage());
      }
    }

    @Override
    void check(ByteString data, Encoding encoding) throws InvalidMessage {
      try {
        if (encoding == Encoding.JSON) {
          DynamicMessage.Builder message = DynamicMessage.newBuilder(type);
          JsonFormat.parser().merge(data.toStringUtf8(), message);
          if (!message.isInitialized()) {
            throw new InvalidMessage(
                "missing required fields: " + message.findInitializationErrors());
          }
        } else {
          DynamicMessage.parseFrom(type, data);
        }
      } catch (InvalidProtocolBufferException | RuntimeException e) {
        throw new InvalidMessage(String.valueOf(e.getMessage()));
      }
    }

    @Override
    String typeName() {
      return "Protocol Buffer";
    }
  }
}

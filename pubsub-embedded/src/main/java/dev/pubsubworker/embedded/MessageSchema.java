package dev.pubsubworker.embedded;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.google.pubsub.v1.Encoding;
import com.google.pubsub.v1.Schema;
import com.squareup.protoparser.DataType;
import com.squareup.protoparser.EnumConstantElement;
import com.squareup.protoparser.EnumElement;
import com.squareup.protoparser.ExtensionsElement;
import com.squareup.protoparser.FieldElement;
import com.squareup.protoparser.MessageElement;
import com.squareup.protoparser.OneOfElement;
import com.squareup.protoparser.ProtoFile;
import com.squareup.protoparser.ProtoParser;
import com.squareup.protoparser.TypeElement;
import java.io.IOException;
import java.util.List;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.DecoderFactory;

/**
 * A parsed schema definition, Avro or Protocol Buffer, that checks messages in the JSON or the
 * binary encoding.
 *
 * <p>Avro definitions are parsed by Apache Avro, and messages read with its JSON or binary decoder
 * (as Pub/Sub does: a JSON message is Avro's JSON encoding, unions written as {@code {"type":
 * value}}). A Protocol Buffer definition is the source text of one {@code .proto} file with exactly
 * one top-level message type (the type messages must have) and no imports; JSON messages are read
 * with protobuf's JSON format (unknown fields refused), binary ones as the wire format.
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
      ProtoFile file;
      try {
        file = ProtoParser.parse("schema.proto", definition);
      } catch (RuntimeException e) {
        throw new InvalidDefinition(e.getMessage());
      }
      if (!file.dependencies().isEmpty() || !file.publicDependencies().isEmpty()) {
        throw new InvalidDefinition("imports are not supported in Protocol Buffer schemas");
      }
      if (!file.extendDeclarations().isEmpty()) {
        throw new InvalidDefinition("extensions are not supported in Protocol Buffer schemas");
      }
      FileDescriptorProto.Builder proto =
          FileDescriptorProto.newBuilder()
              .setName("schema.proto")
              .setSyntax(file.syntax() == ProtoFile.Syntax.PROTO_3 ? "proto3" : "proto2");
      if (file.packageName() != null) {
        proto.setPackage(file.packageName());
      }
      int messages = 0;
      for (TypeElement element : file.typeElements()) {
        if (element instanceof MessageElement message) {
          proto.addMessageType(message(message));
          messages++;
        } else if (element instanceof EnumElement enumElement) {
          proto.addEnumType(enumType(enumElement));
        }
      }
      if (messages != 1) {
        throw new InvalidDefinition(
            "a Protocol Buffer schema must define exactly one top-level message type, but this"
                + " one defines "
                + messages);
      }
      try {
        Descriptors.FileDescriptor descriptor =
            Descriptors.FileDescriptor.buildFrom(proto.build(), new Descriptors.FileDescriptor[0]);
        this.type = descriptor.getMessageTypes().get(0);
      } catch (Descriptors.DescriptorValidationException | RuntimeException e) {
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

    private static DescriptorProto message(MessageElement element) throws InvalidDefinition {
      DescriptorProto.Builder message = DescriptorProto.newBuilder().setName(element.name());
      for (FieldElement field : element.fields()) {
        message.addField(field(field, message, -1));
      }
      List<OneOfElement> oneOfs = element.oneOfs();
      for (int i = 0; i < oneOfs.size(); i++) {
        message.addOneofDecl(OneofDescriptorProto.newBuilder().setName(oneOfs.get(i).name()));
        for (FieldElement field : oneOfs.get(i).fields()) {
          message.addField(field(field, message, i));
        }
      }
      for (TypeElement nested : element.nestedElements()) {
        if (nested instanceof MessageElement nestedMessage) {
          message.addNestedType(message(nestedMessage));
        } else if (nested instanceof EnumElement nestedEnum) {
          message.addEnumType(enumType(nestedEnum));
        }
      }
      for (ExtensionsElement range : element.extensions()) {
        message.addExtensionRangeBuilder().setStart(range.start()).setEnd(range.end() + 1);
      }
      return message.build();
    }

    /**
     * A field; a map field adds its entry type to {@code message}. Named types are left for the
     * descriptor builder to resolve in scope (it tells a message from an enum).
     */
    private static FieldDescriptorProto field(
        FieldElement element, DescriptorProto.Builder message, int oneOfIndex)
        throws InvalidDefinition {
      FieldDescriptorProto.Builder field =
          FieldDescriptorProto.newBuilder().setName(element.name()).setNumber(element.tag());
      field.setLabel(
          switch (element.label()) {
            case REPEATED -> FieldDescriptorProto.Label.LABEL_REPEATED;
            case REQUIRED -> FieldDescriptorProto.Label.LABEL_REQUIRED;
            default -> FieldDescriptorProto.Label.LABEL_OPTIONAL;
          });
      if (oneOfIndex >= 0) {
        field.setOneofIndex(oneOfIndex);
      }
      DataType type = element.type();
      if (type instanceof DataType.MapType map) {
        String entryName = mapEntryName(element.name());
        message.addNestedType(
            DescriptorProto.newBuilder()
                .setName(entryName)
                .addField(entryField("key", 1, map.keyType()))
                .addField(entryField("value", 2, map.valueType()))
                .setOptions(MessageOptions.newBuilder().setMapEntry(true)));
        field.setLabel(FieldDescriptorProto.Label.LABEL_REPEATED).setTypeName(entryName);
        return field.build();
      }
      return typed(field, type).build();
    }

    private static FieldDescriptorProto.Builder entryField(String name, int number, DataType type)
        throws InvalidDefinition {
      return typed(
          FieldDescriptorProto.newBuilder()
              .setName(name)
              .setNumber(number)
              .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL),
          type);
    }

    private static FieldDescriptorProto.Builder typed(
        FieldDescriptorProto.Builder field, DataType type) throws InvalidDefinition {
      if (type instanceof DataType.NamedType named) {
        return field.setTypeName(named.name());
      }
      if (type instanceof DataType.ScalarType scalar) {
        return field.setType(scalarType(scalar));
      }
      throw new InvalidDefinition("a map cannot hold a map: " + field.getName());
    }

    private static FieldDescriptorProto.Type scalarType(DataType.ScalarType scalar)
        throws InvalidDefinition {
      return switch (scalar) {
        case BOOL -> FieldDescriptorProto.Type.TYPE_BOOL;
        case BYTES -> FieldDescriptorProto.Type.TYPE_BYTES;
        case DOUBLE -> FieldDescriptorProto.Type.TYPE_DOUBLE;
        case FLOAT -> FieldDescriptorProto.Type.TYPE_FLOAT;
        case FIXED32 -> FieldDescriptorProto.Type.TYPE_FIXED32;
        case FIXED64 -> FieldDescriptorProto.Type.TYPE_FIXED64;
        case INT32 -> FieldDescriptorProto.Type.TYPE_INT32;
        case INT64 -> FieldDescriptorProto.Type.TYPE_INT64;
        case SFIXED32 -> FieldDescriptorProto.Type.TYPE_SFIXED32;
        case SFIXED64 -> FieldDescriptorProto.Type.TYPE_SFIXED64;
        case SINT32 -> FieldDescriptorProto.Type.TYPE_SINT32;
        case SINT64 -> FieldDescriptorProto.Type.TYPE_SINT64;
        case STRING -> FieldDescriptorProto.Type.TYPE_STRING;
        case UINT32 -> FieldDescriptorProto.Type.TYPE_UINT32;
        case UINT64 -> FieldDescriptorProto.Type.TYPE_UINT64;
        case ANY ->
            throw new InvalidDefinition(
                "google.protobuf.Any needs an import, and imports are not supported");
      };
    }

    /** protoc's name of a map field's entry type: "my_field" -> "MyFieldEntry". */
    private static String mapEntryName(String fieldName) {
      StringBuilder name = new StringBuilder();
      boolean upper = true;
      for (char c : fieldName.toCharArray()) {
        if (c == '_') {
          upper = true;
        } else {
          name.append(upper ? Character.toUpperCase(c) : c);
          upper = false;
        }
      }
      return name.append("Entry").toString();
    }

    private static EnumDescriptorProto enumType(EnumElement element) {
      EnumDescriptorProto.Builder enumType =
          EnumDescriptorProto.newBuilder().setName(element.name());
      for (EnumConstantElement constant : element.constants()) {
        enumType.addValue(
            EnumValueDescriptorProto.newBuilder()
                .setName(constant.name())
                .setNumber(constant.tag()));
      }
      return enumType.build();
    }
  }
}

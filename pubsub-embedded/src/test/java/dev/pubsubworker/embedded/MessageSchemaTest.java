package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.Encoding;
import com.google.pubsub.v1.Schema;
import org.junit.jupiter.api.Test;

/**
 * Schema definitions read and messages checked without a server: the {@code .proto} reader on the
 * forms a schema file takes, and Avro's JSON and binary encodings.
 */
class MessageSchemaTest {

  private static final String ORDER =
      """
      // An order, as a team would write it.
      syntax = "proto3";
      package shop.v1;
      option java_package = "com.example.shop";
      option (my.custom) = { a: 1 b: "x" };

      /* The one top-level message. */
      message Order {
        string id = 1 [json_name = "ref"];
        int32 quantity = 2;
        repeated string notes = 3 [packed = false];
        map<string, Line> lines = 4;
        Status status = 5;
        .shop.v1.Order.Line first_line = 6;
        oneof payment {
          string card = 7;
          string voucher = 8;
        }
        optional bool gift = 9;
        reserved 10 to 12, 15;
        reserved "old";

        message Line {
          string sku = 1;
          sint64 cents = 2;
        }
        enum Status {
          option allow_alias = true;
          NEW = 0;
          SHIPPED = 1 [deprecated = true];
          SENT = 1;
          LOST = -1;
        }
      }
      """;

  private static MessageSchema proto(String definition) throws Exception {
    return MessageSchema.parse(Schema.Type.PROTOCOL_BUFFER, definition);
  }

  private static ByteString utf8(String text) {
    return ByteString.copyFromUtf8(text);
  }

  @Test
  void a_proto3_file_with_nested_types_maps_oneofs_and_options_is_read() throws Exception {
    MessageSchema schema = proto(ORDER);

    assertThatCode(
            () ->
                schema.check(
                    utf8(
                        "{\"ref\":\"o-1\",\"quantity\":2,\"notes\":[\"a\"],"
                            + "\"lines\":{\"l1\":{\"sku\":\"s\",\"cents\":\"-5\"}},"
                            + "\"status\":\"SENT\",\"firstLine\":{\"sku\":\"t\"},"
                            + "\"card\":\"4111\",\"gift\":true}"),
                    Encoding.JSON))
        .doesNotThrowAnyException();
    assertThatCode(() -> schema.check(utf8("{\"id\":\"o-1\",\"status\":-1}"), Encoding.JSON))
        .as("the proto field name and an enum number are JSON too")
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> schema.check(utf8("{\"ref\":\"o-1\",\"extra\":1}"), Encoding.JSON))
        .isInstanceOf(MessageSchema.InvalidMessage.class)
        .hasMessageContaining("extra");
    assertThatThrownBy(() -> schema.check(utf8("{\"quantity\":\"many\"}"), Encoding.JSON))
        .isInstanceOf(MessageSchema.InvalidMessage.class);
    assertThatThrownBy(
            () -> schema.check(utf8("{\"card\":\"4111\",\"voucher\":\"v\"}"), Encoding.JSON))
        .as("two members of one oneof")
        .isInstanceOf(MessageSchema.InvalidMessage.class);
  }

  @Test
  void binary_messages_are_read_as_the_wire_format() throws Exception {
    MessageSchema schema = proto(ORDER);

    // id "o-1", quantity 3, first_line { sku "s" }.
    byte[] valid = {0x0a, 3, 'o', '-', '1', 0x10, 3, 0x32, 3, 0x0a, 1, 's'};
    assertThatCode(() -> schema.check(ByteString.copyFrom(valid), Encoding.BINARY))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () -> schema.check(ByteString.copyFrom(new byte[] {0x0a, 9, 'o'}), Encoding.BINARY))
        .as("truncated")
        .isInstanceOf(MessageSchema.InvalidMessage.class);
    assertThatThrownBy(
            () ->
                schema.check(ByteString.copyFrom(new byte[] {0x10, (byte) 0x80}), Encoding.BINARY))
        .as("a varint cut short")
        .isInstanceOf(MessageSchema.InvalidMessage.class);
  }

  @Test
  void proto2_required_fields_must_be_present() throws Exception {
    MessageSchema schema =
        proto(
            "syntax = \"proto2\";\n"
                + "message Event { required string id = 1; optional int32 n = 2 [default = -3]; }");

    assertThatCode(() -> schema.check(utf8("{\"id\":\"e\"}"), Encoding.JSON))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> schema.check(utf8("{\"n\":1}"), Encoding.JSON))
        .isInstanceOf(MessageSchema.InvalidMessage.class)
        .hasMessageContaining("id");
    assertThatThrownBy(
            () -> schema.check(ByteString.copyFrom(new byte[] {0x10, 1}), Encoding.BINARY))
        .isInstanceOf(MessageSchema.InvalidMessage.class);
  }

  @Test
  void a_file_without_a_syntax_statement_is_proto2() throws Exception {
    MessageSchema schema = proto("message M { optional string s = 1; }");

    assertThatCode(() -> schema.check(utf8("{\"s\":\"x\"}"), Encoding.JSON))
        .doesNotThrowAnyException();
  }

  @Test
  void definitions_a_schema_cannot_use_are_refused_saying_why() {
    assertThatThrownBy(
            () ->
                proto("syntax = \"proto3\";\nimport \"google/protobuf/any.proto\";\nmessage A {}"))
        .isInstanceOf(MessageSchema.InvalidDefinition.class)
        .hasMessage("Syntax error at line 2, column 1: imports are not supported in a schema");
    assertThatThrownBy(() -> proto("syntax = \"proto3\"; message A {} message B {}"))
        .hasMessageContaining("exactly one top-level message type, but this one defines 2");
    assertThatThrownBy(() -> proto("syntax = \"proto3\"; enum E { X = 0; }"))
        .hasMessageContaining("but this one defines 0");
    assertThatThrownBy(() -> proto("syntax = \"proto3\";\nmessage A {\n  Missing m = 1;\n}"))
        .hasMessageContaining("\"Missing\" is not defined");
    assertThatThrownBy(() -> proto("syntax = \"proto3\";\nmessage A {\n  string id = ;\n}"))
        .hasMessage("Syntax error at line 3, column 15: expected a number but found ';'");
    assertThatThrownBy(() -> proto("syntax = \"proto3\"; message A { string id = 1; "))
        .hasMessageContaining("expected '}'");
    assertThatThrownBy(() -> proto("syntax = \"proto4\"; message A {}"))
        .hasMessageContaining("unknown syntax \"proto4\"");
    assertThatThrownBy(() -> proto("syntax = \"proto3\"; message A { int32 a = 1; int32 b = 1; }"))
        .as("protobuf's own checks still apply")
        .hasMessageContaining("has already been used");
    assertThatThrownBy(() -> proto("message A { optional group G = 1 { } }"))
        .hasMessageContaining("groups are not supported");
    assertThatThrownBy(() -> proto("/* never closed")).hasMessageContaining("comment not closed");
  }

  @Test
  void avro_json_messages_use_avros_json_encoding_with_tagged_unions() throws Exception {
    MessageSchema schema =
        MessageSchema.parse(
            Schema.Type.AVRO,
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                + "{\"name\":\"note\",\"type\":[\"null\",\"string\"]},"
                + "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"K\","
                + "\"symbols\":[\"A\",\"B\"]}}]}");

    assertThatCode(
            () -> schema.check(utf8("{\"note\":{\"string\":\"x\"},\"kind\":\"A\"}"), Encoding.JSON))
        .doesNotThrowAnyException();
    assertThatCode(() -> schema.check(utf8("{\"note\":null,\"kind\":\"B\"}"), Encoding.JSON))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> schema.check(utf8("{\"note\":null,\"kind\":\"C\"}"), Encoding.JSON))
        .isInstanceOf(MessageSchema.InvalidMessage.class);
    assertThatThrownBy(() -> schema.check(utf8("not json"), Encoding.JSON))
        .isInstanceOf(MessageSchema.InvalidMessage.class);
    // Binary: union branch 1 (zigzag 2), "x", then enum index 1 (zigzag 2).
    assertThatCode(
            () -> schema.check(ByteString.copyFrom(new byte[] {2, 2, 'x', 2}), Encoding.BINARY))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () -> schema.check(ByteString.copyFrom(new byte[] {2, 2, 'x', 8}), Encoding.BINARY))
        .as("enum index out of range")
        .isInstanceOf(MessageSchema.InvalidMessage.class);
  }

  @Test
  void an_avro_definition_that_does_not_parse_is_refused() {
    assertThatThrownBy(() -> MessageSchema.parse(Schema.Type.AVRO, "{\"type\":\"record\"}"))
        .isInstanceOf(MessageSchema.InvalidDefinition.class);
    assertThatThrownBy(() -> MessageSchema.parse(Schema.Type.AVRO, "{\"type\":\"strin\"}"))
        .isInstanceOf(MessageSchema.InvalidDefinition.class);
    assertThatCode(
            () ->
                MessageSchema.parse(
                    Schema.Type.AVRO,
                    "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}"))
        .doesNotThrowAnyException();
  }
}

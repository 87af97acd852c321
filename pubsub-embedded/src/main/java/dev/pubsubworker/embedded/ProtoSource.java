package dev.pubsubworker.embedded;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumOptions;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads the source text of one {@code .proto} file (proto2 or proto3) into a {@link
 * FileDescriptorProto}, which protobuf-java can then build (resolving type names, checking field
 * numbers). protobuf-java itself builds descriptors only from compiled descriptors.
 *
 * <p>It reads what a message schema needs: {@code syntax}, {@code package}, messages (fields with
 * or without a label, maps, oneofs, nested messages and enums, {@code json_name} and {@code
 * default} options), enums (with {@code allow_alias}), and it skips other options, {@code
 * reserved}, {@code extensions} and services. It refuses imports, {@code extend}, groups and
 * editions, none of which a self-contained schema can use. Named types are left unresolved for
 * protobuf-java, which tells messages from enums.
 */
final class ProtoSource {

  /** The definition is not a .proto file this reader accepts; the message says where and why. */
  static final class SyntaxError extends Exception {
    SyntaxError(String message) {
      super(message);
    }
  }

  private static final Map<String, FieldDescriptorProto.Type> SCALARS =
      Map.ofEntries(
          Map.entry("double", FieldDescriptorProto.Type.TYPE_DOUBLE),
          Map.entry("float", FieldDescriptorProto.Type.TYPE_FLOAT),
          Map.entry("int32", FieldDescriptorProto.Type.TYPE_INT32),
          Map.entry("int64", FieldDescriptorProto.Type.TYPE_INT64),
          Map.entry("uint32", FieldDescriptorProto.Type.TYPE_UINT32),
          Map.entry("uint64", FieldDescriptorProto.Type.TYPE_UINT64),
          Map.entry("sint32", FieldDescriptorProto.Type.TYPE_SINT32),
          Map.entry("sint64", FieldDescriptorProto.Type.TYPE_SINT64),
          Map.entry("fixed32", FieldDescriptorProto.Type.TYPE_FIXED32),
          Map.entry("fixed64", FieldDescriptorProto.Type.TYPE_FIXED64),
          Map.entry("sfixed32", FieldDescriptorProto.Type.TYPE_SFIXED32),
          Map.entry("sfixed64", FieldDescriptorProto.Type.TYPE_SFIXED64),
          Map.entry("bool", FieldDescriptorProto.Type.TYPE_BOOL),
          Map.entry("string", FieldDescriptorProto.Type.TYPE_STRING),
          Map.entry("bytes", FieldDescriptorProto.Type.TYPE_BYTES));

  /** One token: a name, a number, a string (its unescaped value) or a symbol. */
  private record Token(Kind kind, String text, int line, int column) {
    enum Kind {
      NAME,
      NUMBER,
      STRING,
      SYMBOL,
      END
    }

    boolean is(String symbolOrKeyword) {
      return (kind == Kind.SYMBOL || kind == Kind.NAME) && text.equals(symbolOrKeyword);
    }

    String describe() {
      return switch (kind) {
        case END -> "the end of the definition";
        case STRING -> "string \"" + text + "\"";
        default -> "'" + text + "'";
      };
    }
  }

  private final List<Token> tokens;
  private int position;

  private ProtoSource(List<Token> tokens) {
    this.tokens = tokens;
  }

  /**
   * Reads {@code source} as a file named {@code fileName}.
   *
   * @throws SyntaxError naming the line and column of the first problem
   */
  static FileDescriptorProto parse(String fileName, String source) throws SyntaxError {
    return new ProtoSource(tokenize(source)).file(fileName);
  }

  // ---- grammar ----

  private FileDescriptorProto file(String fileName) throws SyntaxError {
    FileDescriptorProto.Builder file =
        FileDescriptorProto.newBuilder().setName(fileName).setSyntax("proto2");
    boolean first = true;
    while (peek().kind() != Token.Kind.END) {
      Token token = next();
      if (token.is(";")) {
        continue;
      }
      switch (token.text()) {
        case "syntax" -> {
          if (!first) {
            throw error(token, "syntax must come first");
          }
          expect("=");
          String syntax = string();
          if (!syntax.equals("proto2") && !syntax.equals("proto3")) {
            throw error(token, "unknown syntax \"" + syntax + "\" (proto2 or proto3)");
          }
          file.setSyntax(syntax);
          expect(";");
        }
        case "package" -> {
          file.setPackage(name());
          expect(";");
        }
        case "option" -> skipStatement();
        case "message" -> file.addMessageType(message(file.getSyntax()));
        case "enum" -> file.addEnumType(enumType());
        case "service" -> {
          name();
          skipBlock();
        }
        case "import" -> throw error(token, "imports are not supported in a schema");
        case "extend" -> throw error(token, "extend is not supported in a schema");
        case "edition" -> throw error(token, "editions are not supported; use proto2 or proto3");
        default -> throw error(token, "expected a message, an enum or an option");
      }
      first = false;
    }
    return file.build();
  }

  private DescriptorProto message(String syntax) throws SyntaxError {
    DescriptorProto.Builder message = DescriptorProto.newBuilder().setName(name());
    expect("{");
    while (!peek().is("}")) {
      Token token = peek();
      if (token.kind() == Token.Kind.END) {
        throw error(token, "expected '}'");
      }
      switch (token.text()) {
        case ";" -> next();
        case "message" -> {
          next();
          message.addNestedType(message(syntax));
        }
        case "enum" -> {
          next();
          message.addEnumType(enumType());
        }
        case "oneof" -> {
          next();
          oneof(message);
        }
        case "option", "reserved", "extensions" -> {
          next();
          skipStatement();
        }
        case "extend" -> throw error(token, "extend is not supported in a schema");
        case "map" -> {
          next();
          mapField(message);
        }
        default -> message.addField(field(true, -1));
      }
    }
    expect("}");
    return message.build();
  }

  private void oneof(DescriptorProto.Builder message) throws SyntaxError {
    int index = message.getOneofDeclCount();
    message.addOneofDecl(OneofDescriptorProto.newBuilder().setName(name()));
    expect("{");
    while (!peek().is("}")) {
      if (peek().is(";")) {
        next();
      } else if (peek().is("option")) {
        next();
        skipStatement();
      } else {
        message.addField(field(false, index));
      }
    }
    expect("}");
  }

  /** {@code [label] type name = number [options];} */
  private FieldDescriptorProto field(boolean labelAllowed, int oneofIndex) throws SyntaxError {
    FieldDescriptorProto.Builder field =
        FieldDescriptorProto.newBuilder().setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL);
    if (labelAllowed) {
      switch (peek().text()) {
        case "repeated" -> {
          next();
          field.setLabel(FieldDescriptorProto.Label.LABEL_REPEATED);
        }
        case "required" -> {
          next();
          field.setLabel(FieldDescriptorProto.Label.LABEL_REQUIRED);
        }
        case "optional" -> next(); // proto3 presence does not change what a message may hold
        default -> {}
      }
    }
    if (peek().is("group")) {
      throw error(peek(), "groups are not supported in a schema");
    }
    type(field, name());
    field.setName(name());
    expect("=");
    field.setNumber(fieldNumber());
    if (oneofIndex >= 0) {
      field.setOneofIndex(oneofIndex);
    }
    fieldOptions(field);
    expect(";");
    return field.build();
  }

  /** {@code map<key, value> name = number [options];}: a repeated field of a nested entry type. */
  private void mapField(DescriptorProto.Builder message) throws SyntaxError {
    expect("<");
    FieldDescriptorProto.Builder key = entryField("key", 1, name());
    expect(",");
    FieldDescriptorProto.Builder value = entryField("value", 2, name());
    expect(">");
    String fieldName = name();
    String entryName = mapEntryName(fieldName);
    message.addNestedType(
        DescriptorProto.newBuilder()
            .setName(entryName)
            .addField(key)
            .addField(value)
            .setOptions(MessageOptions.newBuilder().setMapEntry(true)));
    expect("=");
    FieldDescriptorProto.Builder field =
        FieldDescriptorProto.newBuilder()
            .setName(fieldName)
            .setNumber(fieldNumber())
            .setLabel(FieldDescriptorProto.Label.LABEL_REPEATED)
            .setTypeName(entryName);
    fieldOptions(field);
    expect(";");
    message.addField(field);
  }

  private FieldDescriptorProto.Builder entryField(String name, int number, String type) {
    FieldDescriptorProto.Builder field =
        FieldDescriptorProto.newBuilder()
            .setName(name)
            .setNumber(number)
            .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL);
    type(field, type);
    return field;
  }

  private static void type(FieldDescriptorProto.Builder field, String type) {
    FieldDescriptorProto.Type scalar = SCALARS.get(type);
    if (scalar != null) {
      field.setType(scalar);
    } else {
      field.setTypeName(type);
    }
  }

  /** {@code [json_name = "x", default = 3, packed = true, (custom) = ...]}: the first two count. */
  private void fieldOptions(FieldDescriptorProto.Builder field) throws SyntaxError {
    if (!peek().is("[")) {
      return;
    }
    next();
    while (true) {
      Token option = next();
      if (option.is("json_name") || option.is("default")) {
        expect("=");
        Token value = next();
        if (option.is("default") && value.is("-")) {
          value = new Token(Token.Kind.NUMBER, "-" + next().text(), value.line(), value.column());
        }
        if (option.is("json_name")) {
          field.setJsonName(value.text());
        } else {
          field.setDefaultValue(value.text());
        }
      } else {
        skipUntilAtDepthZero(",", "]", option);
      }
      if (peek().is(",")) {
        next();
      } else {
        expect("]");
        return;
      }
    }
  }

  private EnumDescriptorProto enumType() throws SyntaxError {
    EnumDescriptorProto.Builder enumType = EnumDescriptorProto.newBuilder().setName(name());
    expect("{");
    while (!peek().is("}")) {
      Token token = peek();
      if (token.is(";")) {
        next();
      } else if (token.is("option")) {
        next();
        if (peek().is("allow_alias")) {
          next();
          expect("=");
          enumType.setOptions(EnumOptions.newBuilder().setAllowAlias(next().is("true")));
          expect(";");
        } else {
          skipStatement();
        }
      } else if (token.is("reserved")) {
        next();
        skipStatement();
      } else {
        String valueName = name();
        expect("=");
        boolean negative = peek().is("-");
        if (negative) {
          next();
        }
        int number = integer(next());
        enumType.addValue(
            EnumValueDescriptorProto.newBuilder()
                .setName(valueName)
                .setNumber(negative ? -number : number));
        if (peek().is("[")) {
          next();
          skipUntilAtDepthZero("]", "]", peek());
          expect("]");
        }
        expect(";");
      }
    }
    expect("}");
    return enumType.build();
  }

  // ---- token helpers ----

  private Token peek() {
    return tokens.get(position);
  }

  private Token next() {
    Token token = tokens.get(position);
    if (token.kind() != Token.Kind.END) {
      position++;
    }
    return token;
  }

  private void expect(String symbol) throws SyntaxError {
    Token token = next();
    if (!token.is(symbol)) {
      throw error(token, "expected '" + symbol + "' but found " + token.describe());
    }
  }

  private String name() throws SyntaxError {
    Token token = next();
    if (token.kind() != Token.Kind.NAME) {
      throw error(token, "expected a name but found " + token.describe());
    }
    return token.text();
  }

  private String string() throws SyntaxError {
    Token token = next();
    if (token.kind() != Token.Kind.STRING) {
      throw error(token, "expected a string but found " + token.describe());
    }
    return token.text();
  }

  private int fieldNumber() throws SyntaxError {
    return integer(next());
  }

  private int integer(Token token) throws SyntaxError {
    if (token.kind() != Token.Kind.NUMBER) {
      throw error(token, "expected a number but found " + token.describe());
    }
    try {
      return Integer.decode(token.text());
    } catch (NumberFormatException e) {
      throw error(token, "not an integer: " + token.text());
    }
  }

  /** Skips to the end of a statement: past its ';', or past a '{ ... }' block it opens. */
  private void skipStatement() throws SyntaxError {
    Token start = peek();
    while (true) {
      Token token = next();
      if (token.kind() == Token.Kind.END) {
        throw error(start, "statement not ended");
      }
      if (token.is(";")) {
        return;
      }
      if (token.is("{")) {
        position--;
        skipBlock();
        if (peek().is(";")) {
          next();
        }
        return;
      }
    }
  }

  /** Skips a balanced '{ ... }'. */
  private void skipBlock() throws SyntaxError {
    Token start = peek();
    expect("{");
    int depth = 1;
    while (depth > 0) {
      Token token = next();
      if (token.kind() == Token.Kind.END) {
        throw error(start, "'{' not closed");
      }
      if (token.is("{")) {
        depth++;
      } else if (token.is("}")) {
        depth--;
      }
    }
  }

  /** Skips tokens up to (not including) {@code a} or {@code b} outside any brackets. */
  private void skipUntilAtDepthZero(String a, String b, Token start) throws SyntaxError {
    int depth = 0;
    while (true) {
      Token token = peek();
      if (token.kind() == Token.Kind.END) {
        throw error(start, "option not ended");
      }
      if (depth == 0 && (token.is(a) || token.is(b))) {
        return;
      }
      if (token.is("{") || token.is("(") || token.is("[")) {
        depth++;
      } else if (token.is("}") || token.is(")") || token.is("]")) {
        depth--;
      }
      next();
    }
  }

  private static SyntaxError error(Token at, String message) {
    return new SyntaxError(
        "Syntax error at line " + at.line() + ", column " + at.column() + ": " + message);
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

  // ---- tokenizer ----

  private static List<Token> tokenize(String source) throws SyntaxError {
    List<Token> tokens = new ArrayList<>();
    int i = 0;
    int line = 1;
    int lineStart = 0;
    while (i < source.length()) {
      char c = source.charAt(i);
      int column = i - lineStart + 1;
      if (c == '\n') {
        line++;
        lineStart = i + 1;
        i++;
      } else if (Character.isWhitespace(c)) {
        i++;
      } else if (source.startsWith("//", i)) {
        while (i < source.length() && source.charAt(i) != '\n') {
          i++;
        }
      } else if (source.startsWith("/*", i)) {
        int end = source.indexOf("*/", i + 2);
        if (end < 0) {
          throw new SyntaxError(
              "Syntax error at line " + line + ", column " + column + ": comment not closed");
        }
        for (int j = i; j < end; j++) {
          if (source.charAt(j) == '\n') {
            line++;
            lineStart = j + 1;
          }
        }
        i = end + 2;
      } else if (Character.isLetter(c) || c == '_' || (c == '.' && nextIsLetter(source, i))) {
        int start = i;
        while (i < source.length()
            && (Character.isLetterOrDigit(source.charAt(i))
                || source.charAt(i) == '_'
                || source.charAt(i) == '.')) {
          i++;
        }
        tokens.add(new Token(Token.Kind.NAME, source.substring(start, i), line, column));
      } else if (Character.isDigit(c)) {
        int start = i;
        while (i < source.length()
            && (Character.isLetterOrDigit(source.charAt(i)) || source.charAt(i) == '.')) {
          i++;
        }
        tokens.add(new Token(Token.Kind.NUMBER, source.substring(start, i), line, column));
      } else if (c == '"' || c == '\'') {
        StringBuilder value = new StringBuilder();
        i++;
        while (true) {
          if (i >= source.length() || source.charAt(i) == '\n') {
            throw new SyntaxError(
                "Syntax error at line " + line + ", column " + column + ": string not closed");
          }
          char s = source.charAt(i++);
          if (s == c) {
            break;
          }
          if (s == '\\' && i < source.length()) {
            char escaped = source.charAt(i++);
            value.append(
                switch (escaped) {
                  case 'n' -> '\n';
                  case 't' -> '\t';
                  case 'r' -> '\r';
                  case '0' -> '\0';
                  default -> escaped;
                });
          } else {
            value.append(s);
          }
        }
        tokens.add(new Token(Token.Kind.STRING, value.toString(), line, column));
      } else if ("=;{}[]()<>,:-+".indexOf(c) >= 0) {
        tokens.add(new Token(Token.Kind.SYMBOL, String.valueOf(c), line, column));
        i++;
      } else {
        throw new SyntaxError(
            "Syntax error at line " + line + ", column " + column + ": unexpected '" + c + "'");
      }
    }
    tokens.add(new Token(Token.Kind.END, "", line, source.length() - lineStart + 1));
    return tokens;
  }

  private static boolean nextIsLetter(String source, int i) {
    return i + 1 < source.length()
        && (Character.isLetter(source.charAt(i + 1)) || source.charAt(i + 1) == '_');
  }
}

package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The part of {@code kustomize build} that {@code docker/k8s} uses, for tests without a cluster or
 * a kustomize binary: {@code resources} (manifest files, and folders with a {@code
 * kustomization.yaml}, rendered recursively) and {@code replicas}. Any other kustomization field
 * fails the build, so an overlay that starts patching the base needs support here before its result
 * can be checked.
 */
final class Kustomize {

  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private static final Set<String> SUPPORTED =
      Set.of("apiVersion", "kind", "resources", "replicas");

  private Kustomize() {}

  /** The objects {@code kustomize build dir} would print, in order. */
  static List<ObjectNode> build(Path dir) throws IOException {
    JsonNode kustomization = YAML.readTree(dir.resolve("kustomization.yaml").toFile());
    for (var field : kustomization.properties()) {
      assertThat(SUPPORTED)
          .as(dir + "/kustomization.yaml uses '" + field.getKey() + "'")
          .contains(field.getKey());
    }
    List<ObjectNode> objects = new ArrayList<>();
    for (JsonNode resource : kustomization.path("resources")) {
      Path path = dir.resolve(resource.asText()).normalize();
      objects.addAll(Files.isDirectory(path) ? build(path) : documents(path));
    }
    for (JsonNode replicas : kustomization.path("replicas")) {
      List<ObjectNode> targets =
          objects.stream()
              .filter(
                  o ->
                      o.path("metadata")
                          .path("name")
                          .asText()
                          .equals(replicas.get("name").asText()))
              .filter(o -> o.path("kind").asText().equals("Deployment"))
              .toList();
      assertThat(targets).as(dir + ": replicas for " + replicas.get("name")).hasSize(1);
      ((ObjectNode) targets.get(0).get("spec")).put("replicas", replicas.get("count").asInt());
    }
    Set<String> ids = new HashSet<>();
    for (ObjectNode o : objects) {
      String id = o.path("kind").asText() + "/" + o.path("metadata").path("name").asText();
      assertThat(ids.add(id)).as(dir + ": " + id + " defined twice").isTrue();
    }
    return objects;
  }

  /** The manifest files {@code kustomize build dir} reads, kustomization files included. */
  static Set<Path> files(Path dir) throws IOException {
    Set<Path> files = new LinkedHashSet<>();
    files.add(dir.resolve("kustomization.yaml").normalize());
    for (JsonNode resource :
        YAML.readTree(dir.resolve("kustomization.yaml").toFile()).path("resources")) {
      Path path = dir.resolve(resource.asText()).normalize();
      if (Files.isDirectory(path)) {
        files.addAll(files(path));
      } else {
        files.add(path);
      }
    }
    return files;
  }

  /** The YAML documents of a file, empty ones left out. */
  static List<ObjectNode> documents(Path file) throws IOException {
    List<ObjectNode> documents = new ArrayList<>();
    try (var values = YAML.readerFor(ObjectNode.class).<ObjectNode>readValues(file.toFile())) {
      while (values.hasNext()) {
        ObjectNode document = values.next();
        if (document != null && !document.isEmpty()) {
          assertThat(document.path("kind").asText())
              .as(file + ": a document without kind")
              .isNotEmpty();
          documents.add(document);
        }
      }
    }
    return documents;
  }
}

package dev.pubsubworker.runtime.plugin;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** Compiles a plugin from source and packs it into a jar, so it exists only in that jar. */
final class PluginJars {

  private PluginJars() {}

  /**
   * @param dir where to build
   * @param jarName the jar's file name
   * @param sources class name to Java source
   * @param resources resource path to text (services file, reference.conf)
   */
  static Path build(
      Path dir, String jarName, Map<String, String> sources, Map<String, String> resources)
      throws IOException {
    Path src = Files.createDirectories(dir.resolve("src-" + jarName));
    Path classes = Files.createDirectories(dir.resolve("classes-" + jarName));
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "-d",
                classes.toString(),
                "-cp",
                System.getProperty("java.class.path"),
                "-proc:none"));
    for (Map.Entry<String, String> e : sources.entrySet()) {
      Path file = src.resolve(e.getKey().replace('.', '/') + ".java");
      Files.createDirectories(file.getParent());
      Files.writeString(file, e.getValue());
      args.add(file.toString());
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, args.toArray(String[]::new));
    if (rc != 0) {
      throw new IllegalStateException("plugin did not compile: " + rc);
    }
    Path jar = dir.resolve(jarName);
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        var files = Files.walk(classes)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        Files.copy(f, out);
        out.closeEntry();
      }
      for (Map.Entry<String, String> r : resources.entrySet()) {
        out.putNextEntry(new JarEntry(r.getKey()));
        OutputStream o = out;
        o.write(r.getValue().getBytes(StandardCharsets.UTF_8));
        out.closeEntry();
      }
    }
    return jar;
  }
}

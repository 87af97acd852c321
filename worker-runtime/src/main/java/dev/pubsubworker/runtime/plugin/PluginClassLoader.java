package dev.pubsubworker.runtime.plugin;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The class loader of one plugin jar: <b>child-first for the jar's own packages</b>, parent-first
 * for everything else.
 *
 * <p>A class whose package the jar contains is defined from the jar even when the runtime's class
 * path has a class of the same name (a plugin that is also on the class path, such as the example
 * plugin inside the executable jar, or a user's copy of it); otherwise the jar's own service
 * provider would resolve to the parent's class. Packages the runtime and its plugins must share, so
 * that there is one class for each (the plugin API {@code dev.pubsubworker.api}, Guice and {@code
 * javax/jakarta.inject}, Typesafe Config, SLF4J and the JDK), always come from the parent, even if
 * a jar bundles a copy. Every other class (a library the jar does not contain) comes from the
 * parent as usual. Thread-safe, as {@link java.net.URLClassLoader} is.
 */
final class PluginClassLoader extends java.net.URLClassLoader {

  static {
    registerAsParallelCapable();
  }

  /** Package prefixes always loaded by the parent: the API plugins and the runtime share. */
  static final List<String> SHARED_PREFIXES =
      List.of(
          "java.",
          "javax.",
          "jakarta.inject.",
          "jdk.",
          "sun.",
          "com.sun.",
          "dev.pubsubworker.api.",
          "com.google.inject.",
          "org.aopalliance.",
          "com.typesafe.config.",
          "org.slf4j.");

  private final Set<String> ownPackages;

  private PluginClassLoader(String name, URL jar, Set<String> ownPackages, ClassLoader parent) {
    super(name, new URL[] {jar}, parent);
    this.ownPackages = Set.copyOf(ownPackages);
  }

  /**
   * A loader for {@code jar}, with {@code parent} as the runtime's class loader.
   *
   * @throws IOException if the jar cannot be read as a zip file
   */
  static PluginClassLoader forJar(Path jar, ClassLoader parent) throws IOException {
    return new PluginClassLoader(
        "plugin:" + jar.getFileName(), jar.toUri().toURL(), packagesOf(jar), parent);
  }

  /** The packages with at least one class in {@code jar} (dotted names). */
  static Set<String> packagesOf(Path jar) throws IOException {
    Set<String> packages = new HashSet<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      for (JarEntry entry : java.util.Collections.list(file.entries())) {
        String name = entry.getName();
        if (!entry.isDirectory()
            && name.endsWith(".class")
            && !name.startsWith("META-INF/")
            && name.indexOf('/') > 0) {
          packages.add(name.substring(0, name.lastIndexOf('/')).replace('/', '.'));
        }
      }
    }
    return packages;
  }

  /** Whether {@code className} is defined from the jar before the parent is asked. */
  boolean childFirst(String className) {
    int dot = className.lastIndexOf('.');
    return dot > 0 && ownPackage(className.substring(0, dot));
  }

  private boolean ownPackage(String packageName) {
    for (String shared : SHARED_PREFIXES) {
      if ((packageName + ".").startsWith(shared)) {
        return false;
      }
    }
    return ownPackages.contains(packageName);
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (!childFirst(name)) {
      return super.loadClass(name, resolve);
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        try {
          c = findClass(name);
        } catch (ClassNotFoundException notInJar) {
          // A package split between the jar and the class path: the rest comes from the parent.
          c = super.loadClass(name, false);
        }
      }
      if (resolve) {
        resolveClass(c);
      }
      return c;
    }
  }

  /** The jar's own copy first for resources of its own packages, as for classes. */
  @Override
  public URL getResource(String name) {
    int slash = name.lastIndexOf('/');
    if (slash > 0 && ownPackage(name.substring(0, slash).replace('/', '.'))) {
      URL own = findResource(name);
      if (own != null) {
        return own;
      }
    }
    return super.getResource(name);
  }
}

package dev.pubsubworker.runtime.build;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.api.core.InternalApi;
import dev.pubsubworker.runtime.worker.Worker;
import java.io.IOException;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The runtime's API surface is marked: every public type is API unless it carries {@link
 * InternalApi} (public only because another package of the runtime, or logback by class name, uses
 * it), and the API never hands out an internal type: no public or protected member of an API type
 * names one in its signature, unless that member is itself marked {@link InternalApi}. A new public
 * type or member is so classified when it is written, not found later in a user's code.
 */
class ApiSurfaceTest {

  private static final String ROOT = "dev.pubsubworker.runtime";

  @Test
  void the_api_never_exposes_an_internal_type() throws Exception {
    List<String> leaks = new ArrayList<>();
    for (Class<?> type : publicTypes()) {
      if (internal(type)) {
        continue;
      }
      for (Class<?> c : withNested(type)) {
        if (!Modifier.isPublic(c.getModifiers())) {
          continue;
        }
        for (Member m : members(c)) {
          if (isApi(m)) {
            for (Class<?> named : namedTypes(m)) {
              if (named.getName().startsWith(ROOT) && internal(named)) {
                leaks.add(c.getName() + "." + m.getName() + " names " + named.getName());
              }
            }
          }
        }
      }
    }
    assertThat(leaks).as("API members naming @InternalApi types").isEmpty();
  }

  @Test
  void the_surface_is_what_the_readme_lists() throws Exception {
    Set<String> api = new TreeSet<>();
    for (Class<?> type : publicTypes()) {
      if (!internal(type)) {
        api.add(type.getName().substring(ROOT.length() + 1));
      }
    }
    String readme = Files.readString(moduleDir().resolve("README.md"));
    List<String> missing = api.stream().filter(t -> !readme.contains("`" + t + "`")).toList();
    assertThat(missing).as("API types the README's API surface table does not list").isEmpty();
    assertThat(api).as("the API stays small").hasSizeLessThan(45);
  }

  private static boolean internal(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
      if (c.isAnnotationPresent(InternalApi.class)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isApi(Member m) {
    int mod = m.getModifiers();
    if (!(Modifier.isPublic(mod) || Modifier.isProtected(mod)) || m.isSynthetic()) {
      return false;
    }
    if (m instanceof Method method && method.isBridge()) {
      return false;
    }
    return !((java.lang.reflect.AnnotatedElement) m).isAnnotationPresent(InternalApi.class);
  }

  private static List<Member> members(Class<?> c) {
    List<Member> all = new ArrayList<>();
    all.addAll(List.of(c.getDeclaredMethods()));
    all.addAll(List.of(c.getDeclaredConstructors()));
    all.addAll(List.of(c.getDeclaredFields()));
    return all;
  }

  private static Set<Class<?>> namedTypes(Member m) {
    List<Type> types = new ArrayList<>();
    if (m instanceof Method method) {
      types.add(method.getGenericReturnType());
    }
    if (m instanceof Executable e) {
      types.addAll(List.of(e.getGenericParameterTypes()));
      types.addAll(List.of(e.getGenericExceptionTypes()));
    }
    if (m instanceof Field f) {
      types.add(f.getGenericType());
    }
    Set<Class<?>> named = new java.util.HashSet<>();
    types.forEach(t -> collect(t, named));
    return named;
  }

  private static void collect(Type t, Set<Class<?>> into) {
    if (t instanceof Class<?> c) {
      into.add(c.isArray() ? c.getComponentType() : c);
    } else if (t instanceof ParameterizedType p) {
      collect(p.getRawType(), into);
      for (Type a : p.getActualTypeArguments()) {
        collect(a, into);
      }
    } else if (t instanceof GenericArrayType g) {
      collect(g.getGenericComponentType(), into);
    } else if (t instanceof WildcardType w) {
      Stream.concat(Stream.of(w.getUpperBounds()), Stream.of(w.getLowerBounds()))
          .forEach(b -> collect(b, into));
    }
  }

  private static List<Class<?>> withNested(Class<?> type) {
    List<Class<?>> all = new ArrayList<>();
    all.add(type);
    for (Class<?> n : type.getDeclaredClasses()) {
      all.addAll(withNested(n));
    }
    return all;
  }

  /** Every public top-level type the runtime's jar holds. */
  private static List<Class<?>> publicTypes() throws IOException, URISyntaxException {
    Path classes =
        Path.of(Worker.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<Class<?>> types = new ArrayList<>();
    try (Stream<Path> files = Files.walk(classes)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
        String relative = classes.relativize(f).toString();
        if (relative.contains("$") || relative.endsWith("package-info.class")) {
          continue;
        }
        String name = relative.substring(0, relative.length() - 6).replace('/', '.');
        try {
          Class<?> c = Class.forName(name, false, ApiSurfaceTest.class.getClassLoader());
          if (Modifier.isPublic(c.getModifiers())) {
            types.add(c);
          }
        } catch (ClassNotFoundException e) {
          throw new AssertionError(name, e);
        }
      }
    }
    assertThat(types).as("the runtime's classes were found").hasSizeGreaterThan(20);
    return types;
  }

  /** worker-runtime/, whichever folder the build runs the test from. */
  private static Path moduleDir() throws URISyntaxException {
    Path classes =
        Path.of(Worker.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    return classes.getParent().getParent(); // target/classes -> worker-runtime
  }
}
